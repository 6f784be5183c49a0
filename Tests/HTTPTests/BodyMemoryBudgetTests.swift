import Synchronization
import Testing
@testable import HTTP

/// The shared memory for bodies being received, and one client's share of it.
@Suite struct BodyMemoryBudgetTests {
    /// Counts the grants that came later, through `onGrant`.
    private final class Grants: Sendable {
        let count = Atomic<Int>(0)
        var onGrant: @Sendable () -> Void { { self.count.add(1, ordering: .relaxed) } }
    }

    @Test func claimsThatFit_areGrantedAtOnce_andWaitInLineOtherwise() {
        let budget = BodyMemoryBudget(capacity: 100), grants = Grants()
        let first = budget.claim(25, client: "a", onGrant: grants.onGrant)
        let second = budget.claim(25, client: "b", onGrant: grants.onGrant)
        let third = budget.claim(25, client: "c", onGrant: grants.onGrant)
        let fourth = budget.claim(25, client: "d", onGrant: grants.onGrant)
        let fifth = budget.claim(10, client: "e", onGrant: grants.onGrant)
        #expect([first, second, third, fourth].allSatisfy(\.isGranted) && !fifth.isGranted)
        budget.giveBack(second)
        #expect(fifth.isGranted && grants.count.load(ordering: .relaxed) == 1)
        for ticket in [first, third, fourth, fifth] { budget.giveBack(ticket) }
        #expect(budget.inUse == 0 && budget.waiting == 0)
    }

    /// Found by the security review: 64 slow 1 MiB bodies from one address held the whole
    /// budget, and every other client's write waited its 10 s and got 503.
    @Test func oneClient_holdsAtMostAQuarter_andOthersAreServed() {
        let budget = BodyMemoryBudget(capacity: 100), grants = Grants()
        let held = (0..<5).map { _ in budget.claim(10, client: "slow", onGrant: grants.onGrant) }
        let past = budget.claim(10, client: "slow", onGrant: grants.onGrant)
        #expect(held[0].isGranted && held[1].isGranted)
        // Past its share (25), the client's claims wait aside: the line stays free.
        #expect(!held.suffix(3).contains(where: \.isGranted) && !past.isGranted)
        let other = budget.claim(60, client: "other", onGrant: grants.onGrant)
        #expect(other.isGranted)
        #expect(budget.waiting == 4)
        // As its own bodies finish, its next claims join the line and are granted.
        budget.giveBack(held[0])
        #expect(held[2].isGranted && !held[3].isGranted)
        budget.giveBack(held[1])
        budget.giveBack(held[2])
        #expect(held[3].isGranted && held[4].isGranted && !past.isGranted)
        #expect(grants.count.load(ordering: .relaxed) == 3)
        // One given back while set aside is simply forgotten.
        budget.giveBack(past)
        for ticket in held + [other] { budget.giveBack(ticket) }
        #expect(budget.inUse == 0 && budget.waiting == 0)
    }

    /// A client with nothing held may always claim one body of any allowed size.
    @Test func aBodyLargerThanTheShare_stillFitsAlone() {
        let budget = BodyMemoryBudget(capacity: 100), grants = Grants()
        let large = budget.claim(80, client: "a", onGrant: grants.onGrant)
        let next = budget.claim(1, client: "a", onGrant: grants.onGrant)
        #expect(large.isGranted && !next.isGranted)
        budget.giveBack(large)
        #expect(next.isGranted)
        budget.giveBack(next)
        #expect(budget.inUse == 0)
    }
}
