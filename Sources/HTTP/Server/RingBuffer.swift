/// A first-in, first-out queue over a circular buffer: appending and taking the first
/// element are O(1), and the storage is as large as the longest the queue has been, however
/// many elements pass through it. (An array with a moving head index only shrinks when the
/// queue empties, so under load that never lets it empty it grows with every element.)
struct RingBuffer<Element> {
    private var slots: [Element?] = []
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The most elements the storage holds before it has to grow.
    var capacity: Int { slots.count }

    mutating func append(_ element: Element) {
        if count == slots.count { grow() }
        slots[(head + count) & (slots.count - 1)] = element
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        defer {
            head = (head + 1) & (slots.count - 1)
            count -= 1
        }
        return slots[head].take()
    }

    /// Doubles the storage (a power of two, so that positions wrap with a mask), moving the
    /// elements to its start in order.
    private mutating func grow() {
        var larger = [Element?](repeating: nil, count: max(16, slots.count * 2))
        for offset in 0..<count {
            larger[offset] = slots[(head + offset) & (slots.count - 1)].take()
        }
        slots = larger
        head = 0
    }
}

extension RingBuffer: Sendable where Element: Sendable {}
