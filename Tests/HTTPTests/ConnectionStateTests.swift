import Synchronization
import Testing
@testable import HTTP

/// A consumer whose off-thread work is behind while `behind` says so (an upload's writes).
private struct LaggingConsumer: BodyConsumer {
    final class Lag: Sendable { let behind = Atomic<Bool>(true) }
    let limit = 1000
    let lag: Lag
    mutating func prepare(declaredLength: Int?) -> Int { 10 }
    mutating func consume(_ piece: ArraySlice<UInt8>) throws(HTTPError) {}
    mutating func finish() throws(HTTPError) -> RequestBody { .empty }
    mutating func isBehind(untilDone: Bool, wake: @escaping @Sendable () -> Void) -> Bool {
        lag.behind.load(ordering: .relaxed)
    }
}

/// The connection's state machine without sockets: its clocks, its body memory, its
/// refusals and what follows them, pipelining, its request limit.
@Suite struct ConnectionStateTests {
    typealias F = StateFixture
    let second = StateFixture.second
    let start = StateFixture.start

    @Test func aSilentNewConnection_isClosedAtTheHeadTimeout() {
        let state = F.state()
        #expect(state.deadline(now: start + 10 * second - 1, bodyBytesReceived: 0) == .none)
        #expect(state.deadline(now: start + 10 * second, bodyBytesReceived: 0) == .close)
    }

    /// The head's clock runs from the connection's opening, however late the first byte.
    @Test func anUnfinishedHead_is408AtItsDeadline() {
        var state = F.state()
        state.headBegan(now: start + 9 * second)
        #expect(state.phaseName == "readingHead")
        #expect(state.deadline(now: start + 10 * second - 1, bodyBytesReceived: 0) == .none)
        guard case .refuse(let error) = state.deadline(now: start + 10 * second, bodyBytesReceived: 0) else {
            Issue.record("no refusal"); return
        }
        #expect(error.status == .requestTimeout)
    }

    /// After an answer the connection idles for the idle timeout; a next head has its own
    /// clock from its first byte.
    @Test func aKeptAliveConnection_idlesThenTimesItsNextHeadFromItsFirstByte() {
        var state = F.state()
        _ = state.headReceived(F.head("GET /ping HTTP/1.1\r\nHost: t\r\n\r\n"), clientAddress: "a", match: .notFound, bodyIsBuffered: true, now: start)
        _ = state.dispatch(body: .empty, closesConnection: false)
        state.answerQueued(keepAlive: true, now: start)
        let (finished, next) = state.outputDrained(now: start + second, stopping: false, parserIdle: true)
        #expect(finished.requestEnded && next == .parse && state.phaseName == "idle")
        #expect(state.deadline(now: start + 60 * second, bodyBytesReceived: 0) == .none)
        #expect(state.deadline(now: start + 61 * second, bodyBytesReceived: 0) == .close)
        state.headBegan(now: start + 30 * second)
        #expect(state.deadline(now: start + 40 * second - 1, bodyBytesReceived: 0) == .none)
        #expect(state.deadline(now: start + 40 * second, bodyBytesReceived: 0) != .none)
    }

    @Test func aBodyTooSlow_is408_afterItsGrace() {
        var state = F.state()
        let budget = BodyMemoryBudget(capacity: 10_000)
        F.readingBody(&state, F.post("/json", length: 1000), budget: budget, at: start)
        #expect(state.phaseName == "readingBody" && budget.inUse == 1000)
        #expect(state.deadline(now: start + 10 * second, bodyBytesReceived: 0) == .none)
        // 5 s past the grace at 1 KiB/s owes 5,120 bytes.
        #expect(state.deadline(now: start + 15 * second, bodyBytesReceived: 6000) == .none)
        guard case .refuse(let error) = state.deadline(now: start + 15 * second, bodyBytesReceived: 10) else {
            Issue.record("no refusal"); return
        }
        #expect(error.status == .requestTimeout)
        let (_, ticket) = state.refuse(now: start + 15 * second)
        #expect(ticket != nil && state.closeAfterWrite)
    }

    @Test func aBodyAwaitingMemory_readsOnceGranted_withoutClaimingTwice() throws {
        var state = F.state()
        let budget = BodyMemoryBudget(capacity: 1000)
        let other = budget.claim(1000, client: "b", onGrant: {})
        _ = state.headReceived(F.post("/json", length: 500, extra: "Expect: 100-continue\r\n"),
                               clientAddress: "a", match: F.match(F.post("/json", length: 500)), bodyIsBuffered: false, now: start)
        guard case .claimMemory(let limit) = state.chooseBody(CollectingBodyConsumer(limit: 1000), buffered: 0) else {
            Issue.record("no claim")
            return
        }
        #expect(limit == 1000)
        var claims = 0
        let wait = state.reserveMemory(now: start) { claims += 1; return budget.claim($0, client: "a", onGrant: {}) }
        guard case .wait = wait else { Issue.record("not waiting"); return }
        #expect(state.phaseName == "awaitingMemory")
        #expect(state.deadline(now: start + 9 * second, bodyBytesReceived: 0) == .none)
        budget.giveBack(other)
        let read = state.reserveMemory(now: start + 9 * second) { claims += 1; return budget.claim($0, client: "a", onGrant: {}) }
        guard case .readBody(let sendContinue) = read else { Issue.record("not reading"); return }
        #expect(sendContinue && claims == 1 && state.phaseName == "readingBody")
        // The body clock starts at the grant, not at the head.
        #expect(state.deadline(now: start + 19 * second, bodyBytesReceived: 0) == .none)
    }

    @Test func aBodyAwaitingMemoryPastItsGrace_is503WithRetryAfter() {
        var state = F.state()
        let budget = BodyMemoryBudget(capacity: 100)
        _ = budget.claim(100, client: "b", onGrant: {})
        F.readingBody(&state, F.post("/json", length: 500), budget: budget, at: start)
        #expect(state.phaseName == "awaitingMemory")
        guard case .refuse(let error) = state.deadline(now: start + 10 * second, bodyBytesReceived: 0) else {
            Issue.record("no refusal"); return
        }
        #expect(error.status == .serviceUnavailable && error.headers["Retry-After"] == "1")
        // Refused: it leaves the line, and its claim goes back.
        let (request, ticket) = state.refuse(now: start + 10 * second)
        #expect(request?.head.path == "/json" && ticket != nil)
    }

    @Test func aRefusal_isTheLastAnswer_thenTheConnectionLingers() {
        var state = F.state()
        F.readingBody(&state, F.post("/json", length: 800), budget: BodyMemoryBudget(capacity: 10_000), at: start)
        let (_, ticket) = state.refuse(now: start)
        #expect(ticket != nil && state.phaseName == "writing")
        let (finished, next) = state.outputDrained(now: start, stopping: false, parserIdle: false)
        #expect(finished.requestEnded && finished.ticket == nil && next == .linger)
        state.linger(now: start)
        let underLimit = state.lingered(600 * 1024), overLimit = state.lingered(600 * 1024)
        #expect(!underLimit && overLimit)
        #expect(state.deadline(now: start + 2 * second, bodyBytesReceived: 0) == .close)
    }

    @Test func pipelinedRequests_areAnsweredInTurn_andTheLimitClosesTheLast() {
        var state = F.state(maxRequests: 2)
        for index in 1...2 {
            let head = F.head("GET /ping HTTP/1.1\r\nHost: t\r\n\r\n")
            let action = state.headReceived(head, clientAddress: "a", match: F.match(head), bodyIsBuffered: true, now: start)
            #expect(action == .parse)
            let exchange = state.dispatch(body: .empty, closesConnection: false)
            #expect(exchange?.closesConnection == (index == 2) && state.phaseName == "handling")
            state.answerQueued(keepAlive: index == 1, now: start)
            let (finished, next) = state.outputDrained(now: start, stopping: false, parserIdle: false)
            #expect(finished.requestEnded)
            #expect(next == (index == 1 ? .parse : .linger))
        }
        #expect(state.requestsDispatched == 2)
    }

    @Test func aBodyNobodyTakes_isPassedOverWhenHere_elseAnsweredThenClosed() {
        var state = F.state()
        let head = F.head("GET /ping HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\n")
        let action = state.headReceived(head, clientAddress: "a", match: F.match(head), bodyIsBuffered: true, now: start)
        #expect(action == .prepareBody)
        guard case .skip(5) = state.chooseBody(nil, buffered: 5) else { Issue.record("not skipped"); return }
        var waiting = F.state()
        _ = waiting.headReceived(head, clientAddress: "a", match: F.match(head), bodyIsBuffered: false, now: start)
        guard case .dispatchWithoutBody = waiting.chooseBody(nil, buffered: 2) else { Issue.record("read"); return }
    }

    @Test func aDeclaredBodyOverTheLimit_is413BeforeAByteIsRead() {
        var state = F.state()
        let head = F.post("/json", length: 5000)
        _ = state.headReceived(head, clientAddress: "a", match: F.match(head), bodyIsBuffered: false, now: start)
        guard case .refuse(let error) = state.chooseBody(CollectingBodyConsumer(limit: 1000), buffered: 0) else {
            Issue.record("not refused"); return
        }
        #expect(error.status == .payloadTooLarge)
    }

    @Test func admission_comesBeforeTheBody_andItsValueGoesToTheHandler() throws {
        var state = F.state()
        let head = F.post("/gated", length: 5, extra: "X-Pass: ash\r\n")
        guard case .admit(let admission) = state.headReceived(head, clientAddress: "a", match: F.match(head), bodyIsBuffered: false, now: start)
        else { Issue.record("no admission"); return }
        #expect(state.phaseName == "admitting")
        // A worker has it: no clock runs, and a stop leaves it to the worker.
        #expect(state.deadline(now: start + 100 * second, bodyBytesReceived: 0) == .none)
        let stop = state.beginShutdown()
        #expect(stop == .carryOn && !state.closeAfterWrite)
        state.admitted(try admission.admit(head, remoteAddress: "a"), now: start)
        #expect(state.phaseName == "readingBody")
        _ = state.chooseBody(CollectingBodyConsumer(limit: 1000), buffered: 0)
        _ = state.reserveMemory(now: start) { BodyMemoryBudget(capacity: 100).claim($0, client: "a", onGrant: {}) }
        try state.consume(Array("hello".utf8)[...])
        guard case .bytes(let body) = try state.finishBody() else { Issue.record("no body"); return }
        let exchange = state.dispatch(body: .bytes(body), closesConnection: false)
        #expect(body == Array("hello".utf8) && exchange?.admitted as? String == "ash")
        // A body already here: admission runs with the handler instead.
        var whole = F.state()
        let wholeAction = whole.headReceived(head, clientAddress: "a", match: F.match(head), bodyIsBuffered: true, now: start)
        #expect(wholeAction == .prepareBody)
    }

    @Test func aStop_closesWhatIsIdle_endsStreams_andMakesTheRequestInFlightTheLast() {
        var idle = F.state()
        let idleStop = idle.beginShutdown(), idleCloses = idle.shutdownAfterReading()
        #expect(idleStop == .readWaitingHead && idleCloses)
        var headWaiting = F.state()
        headWaiting.headBegan(now: start)
        let headStop = headWaiting.beginShutdown()
        #expect(headStop == .readWaitingHead)
        _ = headWaiting.headReceived(F.post("/json", length: 5), clientAddress: "a", match: F.match(F.post("/json", length: 5)),
                                     bodyIsBuffered: true, now: start)
        let headCloses = headWaiting.shutdownAfterReading()
        #expect(!headCloses && headWaiting.closeAfterWrite)

        var reading = F.state()
        F.readingBody(&reading, F.post("/json", length: 500), budget: BodyMemoryBudget(capacity: 1000), at: start)
        let readingStop = reading.beginShutdown()
        #expect(readingStop == .carryOn && reading.closeAfterWrite)
        var awaiting = F.state()
        let full = BodyMemoryBudget(capacity: 1000)
        _ = full.claim(1000, client: "b", onGrant: {})
        F.readingBody(&awaiting, F.post("/json", length: 500), budget: full, at: start)
        #expect(awaiting.phaseName == "awaitingMemory")
        let awaitingStop = awaiting.beginShutdown()
        #expect(awaitingStop == .carryOn && awaiting.closeAfterWrite)

        var handling = F.state()
        _ = handling.headReceived(F.head("GET /ping HTTP/1.1\r\nHost: t\r\n\r\n"), clientAddress: "a", match: .notFound, bodyIsBuffered: true, now: start)
        _ = handling.dispatch(body: .empty, closesConnection: false)
        let handlingStop = handling.beginShutdown()
        #expect(handlingStop == .carryOn && !handling.closeAfterWrite)
        handling.answerQueued(keepAlive: true, now: start)
        let writingStop = handling.beginShutdown()
        #expect(writingStop == .carryOn && handling.closeAfterWrite)

        handling.streamStarted()
        let streamStop = handling.beginShutdown()
        let takenOver = handling.streamTakenOver(), takenAgain = handling.streamTakenOver()
        #expect(streamStop == .endStream && takenOver.requestEnded && !takenAgain.requestEnded)

        var lingering = F.state()
        lingering.linger(now: start)
        let lingeringStop = lingering.beginShutdown()
        #expect(lingeringStop == .carryOn)
    }

    @Test func closingWithARequestInFlight_endsIt_andGivesItsMemoryBack() {
        var state = F.state()
        F.readingBody(&state, F.post("/json", length: 500), budget: BodyMemoryBudget(capacity: 1000), at: start)
        let finished = state.close()
        #expect(finished.requestEnded && finished.ticket != nil && state.isClosed)
        let again = state.close()
        #expect(!again.requestEnded)
        #expect(state.deadline(now: start + 1000 * second, bodyBytesReceived: 0) == .none)
    }

    @Test func aConsumerBehindWithItsWrites_stopsReading_andTheEndWaitsForThem() {
        var state = F.state()
        let lag = LaggingConsumer.Lag()
        let head = F.post("/json", length: 500)
        _ = state.headReceived(head, clientAddress: "a", match: F.match(head), bodyIsBuffered: false, now: start)
        _ = state.chooseBody(LaggingConsumer(lag: lag), buffered: 0)
        _ = state.reserveMemory(now: start) { BodyMemoryBudget(capacity: 100).claim($0, client: "a", onGrant: {}) }
        let behind = state.bodyIsBehind(untilDone: false, wake: {})
        #expect(behind && state.activity == .awaitingWrites)
        let endedWhileReading = state.writesCaughtUp()
        #expect(!endedWhileReading && state.activity == .other)
        let behindAtTheEnd = state.bodyIsBehind(untilDone: true, wake: {})
        lag.behind.store(false, ordering: .relaxed)
        let endedAtTheEnd = state.writesCaughtUp()
        let stillBehind = state.bodyIsBehind(untilDone: true, wake: {})
        #expect(behindAtTheEnd && endedAtTheEnd && !stillBehind)
    }
}
