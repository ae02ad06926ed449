package dev.weft.dataplane.exchange;

import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.observe.ExchangeTrace;
import dev.weft.dataplane.resilience.DeadlineTimer;
import dev.weft.dataplane.resilience.ServicePolicy;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;

/**
 * What the {@link Phase}s of one exchange read and write: the per-request context, in the spirit of Pingora's. It
 * holds the request's head and where the phases put their decisions (cluster, route, policy, deadline, the outbound
 * limit's place), and it shows the attempt the phases judge (endpoint, when it was sent). Phases see only this, not
 * the exchange's life cycle, which is {@link ProxyExchange}'s alone.
 *
 * <p>Thread: the exchange's Worker loop only.
 */
public abstract sealed class ExchangeContext extends DeadlineTimer.Entry permits ProxyExchange {
    /** A step over at once: one immutable future shared by every exchange (the Collaborator only reads it). */
    static final Future<Void> DONE = ImmediateEventExecutor.INSTANCE.newSucceededFuture(null);

    PolicyStack stack;
    RequestHead head;
    long start;
    ExchangeTrace trace;

    Cluster cluster;
    ServicePolicy.Route route;
    ServicePolicy policy;
    long deadlineNanos;
    private Object phaseToken;
    private int phaseInt;

    int attempts = 1;
    EndpointState endpoint;
    EndpointState lastEndpoint;
    long sentNanos;
    int inFlightAtSend;

    ExchangeContext(PolicyStack stack, RequestHead head, long start, ExchangeTrace trace) {
        begin(stack, head, start, trace);
    }

    /** A new request on this context: nothing of a previous one is left (see {@link ExchangeSpares}). */
    final void begin(PolicyStack stack, RequestHead head, long start, ExchangeTrace trace) {
        this.stack = stack;
        this.head = head;
        this.start = start;
        this.trace = trace;
        cluster = null;
        route = null;
        policy = null;
        deadlineNanos = 0;
        phaseToken = null;
        phaseInt = 0;
        attempts = 1;
        endpoint = null;
        lastEndpoint = null;
        sentNanos = 0;
        inFlightAtSend = 0;
    }

    public abstract EventLoop loop();

    public RequestHead head() {
        return head;
    }

    public ExchangeTrace trace() {
        return trace;
    }

    /** System.nanoTime() when the request's head arrived. */
    public long startNanos() {
        return start;
    }

    public PolicyStack stack() {
        return stack;
    }

    public Cluster cluster() {
        return cluster;
    }

    /** Set by the route phase: where the request goes, the policy route it matched, and so its policy. */
    public void route(Cluster cluster, ServicePolicy.Route route) {
        this.cluster = cluster;
        this.route = route;
        this.policy = route != null ? route.policy() : cluster.policy();
    }

    public ServicePolicy.Route policyRoute() {
        return route;
    }

    public ServicePolicy policy() {
        return policy;
    }

    /** The absolute deadline (System.nanoTime terms), 0 for none. */
    public long deadline() {
        return deadlineNanos;
    }

    public void deadline(long nanos) {
        deadlineNanos = nanos;
    }

    /**
     * One phase's per-request value (the outbound limit's place); a single slot, because only one phase needs one
     * so far. The phase that sets it is the one that reads it.
     */
    public Object phaseToken() {
        return phaseToken;
    }

    public void phaseToken(Object token) {
        phaseToken = token;
    }

    /** An int beside {@link #phaseToken()} (the in-flight count the outbound limit saw). */
    public int phaseInt() {
        return phaseInt;
    }

    public void phaseInt(int v) {
        phaseInt = v;
    }

    /** This attempt's number, from 1. */
    public int attempts() {
        return attempts;
    }

    /** The endpoint the current attempt holds a slot at, or null. */
    public EndpointState endpoint() {
        return endpoint;
    }

    /** The endpoint the previous attempt went to: a retry's pick avoids it. */
    public EndpointState lastEndpoint() {
        return lastEndpoint;
    }

    /** When the current attempt's head went upstream (0 before). */
    public long sentNanos() {
        return sentNanos;
    }

    /** The endpoint's requests in flight when this attempt was sent (a sample for the learned limits). */
    public int inFlightAtSend() {
        return inFlightAtSend;
    }

    /** The whole request body was read from the downstream. */
    public abstract boolean requestComplete();

    /** Whether a retry could send the same body again: none was sent yet, it was kept whole, or it is empty. */
    public abstract boolean bodyReplayable();

    /**
     * Whether another attempt is still possible: nothing of an answer was relayed, and the attempt that just ended
     * did not start an answer that streams (an error answer is dropped for a retry only when it came whole).
     */
    public abstract boolean canRetryNow();

    /** Whether an answer has started downstream. */
    public abstract boolean relayed();

    /** Gives back the current attempt's endpoint slot, if it holds one. */
    void releaseSlot() {
        if (endpoint != null) {
            cluster.release(endpoint);
            endpoint = null;
        }
    }
}
