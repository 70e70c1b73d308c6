import Foundation
import Testing
import RampartCore

@Suite("DecodingError.fieldProblem")
struct DecodingErrorProblemTests {
    struct Inner: Decodable { var count: Int }
    struct Outer: Decodable { var name: String; var inner: Inner; var url: URL }

    private func problem(_ json: String) -> String? {
        do {
            _ = try JSONDecoder().decode(Outer.self, from: Data(json.utf8))
            Issue.record("\(json) decoded")
            return nil
        } catch {
            return DecodingError.fieldProblem(in: error)
        }
    }

    @Test func missingFieldIsNamed() {
        #expect(problem(#"{"inner": {"count": 1}, "url": "https://e.example"}"#) == #"the field "name" is missing"#)
    }

    @Test func wrongTypeAndNullGiveThePath() {
        #expect(problem(#"{"name": "a", "inner": {"count": "x"}, "url": "https://e.example"}"#) == #"a field has the wrong type at "inner.count""#)
        #expect(problem(#"{"name": null, "inner": {"count": 1}, "url": "https://e.example"}"#) == #"a field has the wrong type at "name""#)
    }

    @Test func invalidFieldIsNamed() {
        #expect(problem(#"{"name": "a", "inner": {"count": 1}, "url": ""}"#) == #"the field "url" is invalid"#)
    }

    @Test func notJSONAndOtherErrorsNameNoField() {
        #expect(problem("not json") == nil)
        #expect(DecodingError.fieldProblem(in: CocoaError(.fileNoSuchFile)) == nil)
    }
}
