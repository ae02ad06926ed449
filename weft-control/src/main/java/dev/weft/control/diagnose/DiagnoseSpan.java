package dev.weft.control.diagnose;

/**
 * The fields of one sidecar span that culprit finding reads (docs/observability.md lists the span model): one side of
 * one RPC, as a {@code CLIENT} span (the caller's sidecar, outbound) or a {@code SERVER} span (the callee's sidecar,
 * inbound).
 *
 * @param traceId        the trace, lower-case hex
 * @param id             the span's id, lower-case hex
 * @param parentId       the parent span's id, or null for a root
 * @param client         true for a CLIENT span, false for a SERVER span
 * @param service        the sidecar's own service ({@code localEndpoint.serviceName})
 * @param remoteService  CLIENT: the destination service; SERVER: null
 * @param startMicros    epoch µs when the request reached the sidecar
 * @param durationMicros µs to the last answer byte
 * @param admittedMicros epoch µs of the {@code admitted} annotation (a capacity slot granted), 0 when absent
 * @param status         the status sent downstream, 0 when unknown
 * @param error          the {@code error} tag: the sidecar's {@code x-weft-error} kind or an upstream 5xx status; null
 *                       for a success
 * @param endpoint       CLIENT: the address of the endpoint the request went to ({@code weft.endpoint.address}); null
 * @param endpointId     CLIENT: that endpoint's instance id ({@code weft.endpoint}); null
 */
public record DiagnoseSpan(String traceId, String id, String parentId, boolean client, String service,
                           String remoteService, long startMicros, long durationMicros, long admittedMicros, int status,
                           String error, String endpoint, String endpointId) {

    public long endMicros() {
        return startMicros + durationMicros;
    }

    /** Time waiting for a capacity slot: span start to {@code admitted}; 0 when there is no such annotation. */
    public long queueMicros() {
        return admittedMicros > 0 ? Math.max(0, Math.min(admittedMicros, endMicros()) - startMicros) : 0;
    }

    public boolean failed() {
        return error != null;
    }
}
