import Foundation
import HTTP

/// Trust mode: applies the faults an app's test suite asked for (`DevFaults`, API.md
/// "Faults") to the requests they match, before anything else of the request is done: the
/// latency first, then the status or the dropped connection instead of the answer; with
/// `after_commit`, the request is carried out first and its answer lost. `/api/dev/*` is
/// never touched. When no fault is in force a request pays one atomic load.
struct FaultStage: RequestStage {
    let faults: DevFaults

    func handle(_ request: Request, _ context: inout AppContext, next: AppHandler) throws -> Response {
        guard faults.isArmed, let fault = try faults.claim(method: request.method.rawValue, path: String(request.path)) else {
            return try next(request, &context)
        }
        if fault.latencyMilliseconds > 0 { usleep(UInt32(fault.latencyMilliseconds) * 1000) }
        if fault.afterCommit {
            // Carried out; whatever it answered is lost.
            _ = try? next(request, &context)
        } else if !fault.drop && fault.status == nil {
            return try next(request, &context)
        }
        if fault.drop { return .dropConnection }
        throw Self.error(fault)
    }

    /// The documented error answer for the fault's status (`Retry-After` with 429 and 503).
    static func error(_ fault: Fault) -> HTTPError {
        let code = fault.status ?? 503
        var headers = HTTPHeaders()
        if code == 429 || code == 503 { headers.add("Retry-After", "1") }
        return HTTPError(HTTPStatus(code, reasons[code] ?? "Error"),
                         message: "a fault made by /api/dev/faults (id \(fault.id)) answered this request", headers: headers)
    }

    private static let reasons: [Int: String] = Dictionary(uniqueKeysWithValues: [
        HTTPStatus.badRequest, .unauthorized, .forbidden, .notFound, .conflict, .gone, .payloadTooLarge,
        .unsupportedMediaType, .unprocessableEntity, .tooManyRequests, .internalServerError, .serviceUnavailable,
    ].map { ($0.code, $0.reason) })
}
