import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One long-lived HTTP request whose body is read as it arrives: the answer's head, then
/// its bytes in whatever pieces the network delivers. `URLSession.bytes(for:)` would do
/// this but does not exist in swift-corelibs-foundation, so a data delegate feeds an
/// `AsyncThrowingStream` instead, which works alike on Linux and Apple platforms.
final class StreamingConnection: Sendable {
    enum Piece: Sendable {
        case head(HTTPURLResponse)
        case bytes(Data)
    }

    /// The head first, then the body; finishes when the server ends the answer, throws
    /// when the connection fails.
    let pieces: AsyncThrowingStream<Piece, any Error>
    private let session: URLSession
    private let task: URLSessionDataTask

    /// `base`: the configuration of the session the client's other calls use (its proxy,
    /// headers, cookie and TLS settings), if it has one; a session with a delegate of its
    /// own is needed to see the bytes as they come.
    init(_ request: URLRequest, base: URLSessionConfiguration? = nil) {
        let (pieces, continuation) = AsyncThrowingStream<Piece, any Error>.makeStream()
        let delegate = Delegate(continuation)
        let configuration = (base?.copy() as? URLSessionConfiguration) ?? URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = request.timeoutInterval
        // The delegate's queue is serial: pieces are yielded in the order they arrive.
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        task = session.dataTask(with: request)
        self.pieces = pieces
        continuation.onTermination = { [session] _ in session.invalidateAndCancel() }
        task.resume()
    }

    /// Ends the request; the session lets go of its delegate.
    func close() {
        session.invalidateAndCancel()
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Receives the task's callbacks. The head is taken from the task when the first bytes
    /// (or the end) arrive rather than from `didReceive response:`, whose completion
    /// handler's signature differs between Foundation's implementations.
    private final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        private let continuation: AsyncThrowingStream<Piece, any Error>.Continuation
        /// Touched only on the session's serial delegate queue.
        private var sentHead = false

        init(_ continuation: AsyncThrowingStream<Piece, any Error>.Continuation) {
            self.continuation = continuation
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            sendHead(of: dataTask)
            continuation.yield(.bytes(data))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            if let error {
                continuation.finish(throwing: error)
            } else {
                sendHead(of: task)
                continuation.finish()
            }
        }

        private func sendHead(of task: URLSessionTask) {
            guard !sentHead, let response = task.response as? HTTPURLResponse else { return }
            sentHead = true
            continuation.yield(.head(response))
        }
    }
}
