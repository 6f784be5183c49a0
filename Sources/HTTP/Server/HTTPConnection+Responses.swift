/// The response side of a connection: answers as bytes, files (sendfile) and streams.
extension HTTPConnection {
    /// A response stream in progress on this connection.
    struct OpenStream {
        let writer: StreamWriter
        /// HTTP/1.1 frames each write as a chunk; HTTP/1.0 has no framing and ends with the
        /// connection.
        let chunked: Bool
        /// The producer finished and the terminating chunk is queued.
        var ending = false
    }

    private static let lastChunk = Array("0\r\n\r\n".utf8)

    var hasPendingOutput: Bool { outboxSent < outbox.count || pendingFile != nil }

    /// Answers the request, then any pipelined ones this thread may answer too.
    /// `refuseAsBusy`: it waited too long for a worker; say 503 instead of running it.
    func serve(_ first: ServerCore.Exchange, onWorker: Bool, refuseAsBusy: Bool = false) {
        var exchange = first
        var busy = refuseAsBusy
        while true {
            guard let answer = busy ? core.respondBusy(to: exchange) : core.respond(to: &exchange) else {
                return moveToHeavyLane(exchange, onWorker: onWorker)
            }
            busy = false
            // The handler is done with the body.
            releaseBodyMemory()
            guard !state.isClosed else { return }
            if outbox.isEmpty { outbox = answer.bytes } else { outbox += answer.bytes }
            pendingFile = answer.file.map { ($0, 0) }
            state.answerQueued(keepAlive: answer.keepAlive, now: Self.now())
            if let stream = answer.stream {
                return startStream(stream, version: exchange.head.version, onWorker: onWorker)
            }
            guard flush() else { return close() }
            if hasPendingOutput { return proceed(.awaitOutput, onWorker: onWorker) }
            let step = afterWrite()
            guard case .handle(let next) = step, onWorker || next.runsOnEventLoop else {
                return proceed(step, onWorker: onWorker)
            }
            exchange = next
        }
    }

    /// Everything queued is out: finish the request it answered, then see what comes next.
    func afterWrite() -> Step {
        let (finished, next) = state.outputDrained(now: Self.now(), stopping: core.isStopping, parserIdle: parser.isIdle)
        perform(finished)
        switch next {
        case .linger: return .linger
        case .close: return .close
        case .parse: return nextStep()
        }
    }

    /// Writes what it can without blocking: the queued bytes, then the file; false if the
    /// connection broke.
    func flush() -> Bool {
        while outboxSent < outbox.count {
            let result = outbox.withUnsafeBytes { Socket.write(socket.fd, UnsafeRawBufferPointer(rebasing: $0[outboxSent...])) }
            switch result {
            case .transferred(let count):
                outboxSent += count
                noteWriteProgress()
            case .wouldBlock:
                // A stream appends while the socket is full: what went out must not stay
                // at the front, or a long stream to a steady reader keeps all it ever sent.
                if outboxSent >= 64 * 1024 {
                    outbox.removeFirst(outboxSent)
                    outboxSent = 0
                }
                return true
            case .closed:
                return false
            }
        }
        // Nothing is kept between answers: an idle connection holds no buffer.
        outbox = []
        outboxSent = 0
        return sendPendingFile()
    }

    private func sendPendingFile() -> Bool {
        guard let (file, start) = pendingFile else { return true }
        var offset = start
        while offset < file.length {
            switch Socket.sendFile(socket.fd, from: file.descriptor, offset: &offset, count: file.length - offset) {
            case .transferred:
                noteWriteProgress()
            case .wouldBlock:
                pendingFile = (file, offset)
                return true
            case .closed:
                return false
            }
        }
        pendingFile = nil
        return true
    }

    private func noteWriteProgress() {
        state.wroteSome(now: Self.now())
    }

    // MARK: Streams

    /// The head is queued and the producer gets its writer. The request stays in flight
    /// until the loop takes the stream over (`pumpStream`), so that a stop cannot pass it by
    /// while a worker still starts it; from then on a stream does not hold up a stop. A
    /// stream that starts after the stop began ends at once.
    private func startStream(_ body: ResponseStream, version: RequestHead.Version, onWorker: Bool) {
        let writer = StreamWriter(queueLimit: body.queueLimit, wakeLoop: { [loop, id] in loop.schedule(id) })
        stream = OpenStream(writer: writer, chunked: version == .http1_1)
        state.streamStarted()
        body.start(writer)
        if core.isStopping { return endStreamForShutdown() }
        guard flush() else { return close() }
        proceed(.stream, onWorker: onWorker)
    }

    var streamInterest: PollInterest {
        hasPendingOutput ? [.readable, .writable] : .readable
    }

    /// The socket is readable (the client may have gone) or writable (room for more).
    func handleStreamEvent(_ event: PollEvent) {
        if event.readable || event.hangUp {
            let buffer = loop.readBuffer
            reading: while true {
                switch Socket.read(socket.fd, into: buffer) {
                case .transferred(let count):
                    // A pipelined request waits for the stream's end; a client that sends
                    // more than a head's worth meanwhile is not speaking HTTP.
                    parser.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                    if parser.bufferedByteCount > core.configuration.limits.maxHeadBytes { return close() }
                case .wouldBlock:
                    break reading
                case .closed:
                    return close()
                }
            }
        }
        pumpStream()
    }

    /// Moves what the producer wrote into the outbox, framed, and sends what the socket takes.
    func pumpStream() {
        guard var open = stream else { return }
        perform(state.streamTakenOver())
        let delivery = open.writer.takeDelivery()
        if delivery.cancelled { return close() }
        for chunk in delivery.chunks { appendStreamBytes(chunk, chunked: open.chunked) }
        if delivery.finished && !open.ending {
            open.ending = true
            stream = open
            if open.chunked { outbox += Self.lastChunk } else { state.closeAfterWrite = true }
        }
        guard flush() else { return close() }
        open.writer.noteUnsent(outbox.count - outboxSent)
        if open.ending && !hasPendingOutput { return endStream() }
        loop.poller.rearm(socket.fd, token: id, interest: streamInterest)
    }

    private func appendStreamBytes(_ bytes: [UInt8], chunked: Bool) {
        guard chunked else { return outbox += bytes }
        outbox += Array(String(bytes.count, radix: 16).utf8)
        outbox += [13, 10]
        outbox += bytes
        outbox += [13, 10]
    }

    /// The stream is over and sent: the connection serves the next request, or closes.
    private func endStream() {
        guard let open = stream else { return }
        stream = nil
        open.writer.markClosed()
        state.streamEnded(now: Self.now())
        proceed(afterWrite())
    }

    /// A stop ends streams at once: the terminating chunk if the socket takes it, then close.
    func endStreamForShutdown() {
        if stream?.chunked == true { outbox += Self.lastChunk }
        _ = flush()
        close()
    }
}
