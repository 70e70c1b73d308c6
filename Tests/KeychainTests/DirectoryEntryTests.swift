import Foundation
import Keychain
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the file keychain reads the names `readdir(3)` returns.
///
/// The C library packs directory entries at their real length (`d_reclen`), shorter than
/// `MemoryLayout<dirent>.size`. Reading `entry.pointee.d_name` copies the whole declared name
/// array, so for the last entry of a buffer it reads past the buffer's end. CI saw that kill a
/// writer of `twoProcessesWritingAtOnceLoseNoItem` (SIGSEGV in `memcpy`), once in many runs.
/// This test makes the bad case certain: a short entry at the very end of a readable page, with
/// an unreadable page right after it.
@Suite("Directory entries")
struct DirectoryEntryTests {
    @Test func aShortEntryAtTheEndOfAPageIsReadWithoutTouchingTheNextPage() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard let region = mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              region != UnsafeMutableRawPointer(bitPattern: -1)
        else { throw POSIXError(.ENOMEM) }
        defer { munmap(region, 2 * page) }
        try #require(mprotect(region + page, page, PROT_NONE) == 0, "without the guard page the test proves nothing")

        let name = Array("4f2a.item".utf8) + [0]
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        // The entry's real length, rounded to 8 as the kernel does, ends exactly at the page end.
        let length = (nameOffset + name.count + 7) & ~7
        #expect(length < MemoryLayout<dirent>.size, "the entry is shorter than the declared struct")
        let start = region + page - length
        memset(start, 0, length)
        name.withUnsafeBytes { (start + nameOffset).copyMemory(from: $0.baseAddress!, byteCount: name.count) }

        #expect(directoryEntryName(start.assumingMemoryBound(to: dirent.self)) == "4f2a.item")
    }

    @Test func realDirectoryListingsGiveEveryName() throws {
        let folder = TemporaryFolder()
        // Names of every length up to NAME_MAX, so entries of every size sit at buffer ends.
        let names = Set((1...255).map { length in String(repeating: "n", count: length - String(length).count) + String(length) })
        for name in names { #expect(FileManager.default.createFile(atPath: folder.child(name).path, contents: nil)) }
        guard let dir = opendir(folder.url.path) else { throw POSIXError(.ENOENT) }
        defer { closedir(dir) }
        var seen: Set<String> = []
        while let entry = readdir(dir) { seen.insert(directoryEntryName(UnsafePointer(entry))) }
        #expect(seen.subtracting([".", ".."]) == names)
    }
}
