// Fuzz target: the agent's wire frames (length-prefixed body: version, header length, JSON
// header, secret), as the agent reads a client's request and a client reads the agent's
// answer, through a real socket pair.
//
// Oracles: no crash or hang; every failure is a typed AgentError; a header that decodes as a
// request, written again by the client's writer and read back by the agent's reader, gives the
// same request and secret.
@_spi(Fuzzing) import RampartAgent
import FuzzSupport

let target = "agentwire"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAgentWire(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.bytes(data, size)
    guard let (frames, error) = try? AgentWireFuzzing.readFrames(bytes) else { return 0 }
    if let error {
        Fuzz.check(error is AgentError, target, "the reader threw an untyped error: \(error)")
    }
    for frame in frames {
        if let request = frame.request {
            Fuzz.check(frame.rewritten == request, target,
                       "request \(request) did not survive write/read (got \(frame.rewritten ?? "nothing"))")
        }
    }
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_agentwire_main")
public func fuzzAgentWireMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzAgentWire)
}
