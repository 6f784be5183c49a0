import Images
import Synchronization

/// What the image pipeline did on this instance, for `/metrics`.
final class ImageCounters: Sendable {
    private let processedCount = Atomic<Int>(0)
    private let unreadableCount = Atomic<Int>(0)
    private let tooLargeCount = Atomic<Int>(0)
    private let sizesCount = Atomic<Int>(0)

    struct Snapshot {
        let processed: Int
        let unreadable: Int
        let tooLarge: Int
        let sizesMade: Int
    }

    func processed() { processedCount.add(1, ordering: .relaxed) }
    func sizeMade() { sizesCount.add(1, ordering: .relaxed) }

    func refused(_ failure: ImageFailure) {
        switch failure {
        case .unreadable: unreadableCount.add(1, ordering: .relaxed)
        case .tooLarge: tooLargeCount.add(1, ordering: .relaxed)
        case .notWritten: break
        }
    }

    var snapshot: Snapshot {
        Snapshot(processed: processedCount.load(ordering: .relaxed), unreadable: unreadableCount.load(ordering: .relaxed),
                 tooLarge: tooLargeCount.load(ordering: .relaxed), sizesMade: sizesCount.load(ordering: .relaxed))
    }
}
