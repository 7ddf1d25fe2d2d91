import Testing
import VoicePipeClient
import VoicePipeSession

/// The events every transport delivers: a reader that is cancelled while it waits stops waiting
/// and takes nothing, so a session driver's task can be cancelled and another can read on.
struct TransportEventQueueTests {
    @Test func aReaderCancelledWhileWaitingReturnsAndTheNextReaderGetsTheEvent() async throws {
        let (client, runtime) = InMemoryTransport.pair()
        client.open()
        // Nothing more comes: only the deadline, which cancels the reader, ends this wait.
        #expect(await TransportTesting.events(of: client, within: 0.2, until: { _ in false }) == [.opened])
        try runtime.send(#"{"late":true}"#)
        runtime.close()
        #expect(await TransportTesting.events(of: client) == [.message(#"{"late":true}"#), .closed(.closedByRuntime(nil))])
    }
}
