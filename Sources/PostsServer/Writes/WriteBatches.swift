import Postgres

/// How a batch of requests' writes (`WriteCoalescer`) runs so that one request's part never
/// fails the others': the statement runs over every member whose caller's proof has not
/// been refuted; when a proof raises (the statement was skipped: nothing was written), its
/// member gets the refutation (its request runs again with its caller read afresh) and the
/// rest run again without it; when the statement fails for what one member brought (a row
/// deleted under it, a constraint), each member runs again alone and gets its own answer.
/// Only a failure of the database itself (unreachable, too slow) is every member's.
enum WriteBatches {
    static func run<Member, Outcome>(
        _ members: [Member], precondition: (Member) -> Precondition?,
        statement: ([Member]) throws -> [Result<Outcome, any Error>]
    ) -> [Result<Outcome, any Error>] {
        var outcomes = [Result<Outcome, any Error>?](repeating: nil, count: members.count)
        var left = Array(members.indices)
        func refuted(_ index: Int) -> PostgresError? { precondition(members[index])?.refutationError }
        while !left.isEmpty {
            left = left.filter { index in
                guard let error = refuted(index) else { return true }
                outcomes[index] = .failure(error)
                return false
            }
            guard !left.isEmpty else { break }
            do {
                let results = try statement(left.map { members[$0] })
                for (index, result) in zip(left, results) { outcomes[index] = result }
                break
            } catch {
                if left.contains(where: { refuted($0) != nil }) { continue }
                if left.count == 1 || isTheDatabases(error) {
                    for index in left { outcomes[index] = .failure(error) }
                    break
                }
                for index in left {
                    outcomes[index] = Result { try statement([members[index]])[0].get() }
                }
                break
            }
        }
        return outcomes.map { $0! }
    }

    /// A failure every member would meet alone too: the database unreachable, lost or too slow.
    private static func isTheDatabases(_ error: any Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        switch error.kind {
        case .connectionFailed, .connectionLost, .poolTimeout: return true
        case .server: return error.sqlState == .queryCanceled
        default: return false
        }
    }
}
