package dev.weft.dataplane.metrics;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** All counters of one sidecar; rendered at /metrics by the admin server. */
public final class SidecarMetrics {
    public final TrafficMetrics outbound = new TrafficMetrics("outbound");
    public final TrafficMetrics inbound = new TrafficMetrics("inbound");
    public final LongAdder badRequests = new LongAdder();
    public final LongAdder headersTooLarge = new LongAdder();
    public final LongAdder smuggling = new LongAdder();
    /** Connections answered 408: a request head not complete within --request-head-timeout of its first byte. */
    public final LongAdder requestHeadTimeouts = new LongAdder();
    /** Requests answered 408 (or cut, if answered already): no byte of their body for --body-timeout. */
    public final LongAdder bodyTimeouts = new LongAdder();
    /** Client connections to an HTTP/1.1 listener closed after --idle-timeout with no request. */
    public final LongAdder idleConnectionsClosed = new LongAdder();
    public final LongAdder unknownService = new LongAdder();
    public final LongAdder appConnectFailures = new LongAdder();
    public final LongAdder appConnectionsOpened = new LongAdder();
    public final LongAdder appRejectedAtCapacity = new LongAdder();
    public final LongAdder streamsReset = new LongAdder();
    public final LongAdder connectRetries = new LongAdder();
    public final LongAdder downstreamConnections = new LongAdder();
    public final LongAdder meshConnectionsAccepted = new LongAdder();
    /** weft_rejected_total{boundary,reason}: input refused at a boundary (see {@link Rejections}). */
    public final Rejections rejected = new Rejections();
    /**
     * weft_authz_denied_total{rule}: inbound requests an authorization rule (or the default, "default") denied. Keyed
     * by rule name, which only a policy document names, so the label set is the operator's; a counter outlives the
     * document that made it, so a re-applied rule keeps counting.
     */
    public final ConcurrentHashMap<String, LongAdder> authzDenied = new ConcurrentHashMap<>();
}
