/// Byte-level edits an input describes (so that a structured target can seal something valid,
/// change it as an attacker would, and check that the reader notices).
public enum Mutations {
    /// Applies up to 4 edits read from `reader` to `bytes`: flip a byte, truncate, insert a
    /// byte, delete a range, duplicate a range. Positions are taken modulo the length.
    public static func apply(_ bytes: [UInt8], _ reader: inout FuzzReader) -> [UInt8] {
        var out = bytes
        let count = Int(reader.byte() % 5)
        for _ in 0..<count {
            let op = reader.byte() % 5
            let position = out.isEmpty ? 0 : reader.uint16() % (out.count + 1)
            let value = reader.byte()
            switch op {
            case 0: if position < out.count { out[position] ^= value == 0 ? 1 : value }
            case 1: out.removeSubrange(position...)
            case 2: out.insert(value, at: position)
            case 3: out.removeSubrange(position..<min(out.count, position + Int(value % 64) + 1))
            default: out.insert(contentsOf: out[position..<min(out.count, position + Int(value % 64) + 1)], at: position)
            }
        }
        return out
    }
}
