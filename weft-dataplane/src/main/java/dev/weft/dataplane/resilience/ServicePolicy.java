package dev.weft.dataplane.resilience;

import dev.weft.dataplane.authz.AuthorizationPolicy;

import java.time.Duration;
import java.util.List;

/**
 * How calls to one destination service are protected. Resolved per request (a route may override), read on the
 * Worker loops, replaced as a whole when a new policy arrives (immutable, so no request sees half of an update).
 *
 * @param timeout        longest a request may take end to end before 504 (its remaining budget travels downstream
 *                       in {@code x-weft-deadline-ms}); null for no timeout
 * @param retry          when and how often to retry
 * @param outlier        when to eject a failing endpoint
 * @param rateLimit      requests per second allowed (0 = unlimited), answered 429 beyond
 * @param rateBurst      requests at once above the rate that each bucket (service-wide, per route, per caller)
 *                       tolerates; 0 when the policy named none: each bucket then takes a tenth of its own rate
 * @param perCallerRate  requests per second allowed per calling service (0 = unlimited)
 * @param routes         routes with their own timeout, retries or rate limit, first match wins
 * @param concurrencyLimit inbound: how the service's own sidecars limit what reaches its app (service-wide only)
 * @param maxConnections most HTTP/1.1 connections to one endpoint of the service (the local app on the inbound
 *                       side, a peer sidecar over {@code --mesh-protocol http1}); beyond, calls fail fast with 503
 *                       {@code circuit-open}; 0 = no cap (service-wide only)
 * @param outboundLimit  outbound: how many requests a caller's sidecar has in flight to the service at once, learned
 *                       from the latency it sees; beyond, 503 {@code outbound-limit} at once (service-wide only)
 * @param authorization  inbound: which callers may call the service, checked by its own sidecars (service-wide only;
 *                       {@link AuthorizationPolicy#NONE}, allowing every caller, when the document has no section)
 * @param slo            the service's objective, or null: not enforced by any sidecar, read by the control plane's
 *                       culprit finding ({@code ./weft diagnose}) from the stored document (service-wide only)
 */
public record ServicePolicy(Duration timeout, RetryPolicy retry, OutlierPolicy outlier, double rateLimit,
                            int rateBurst, double perCallerRate, List<Route> routes, ConcurrencyLimit concurrencyLimit,
                            int maxConnections, ConcurrencyLimit outboundLimit, AuthorizationPolicy authorization,
                            Slo slo) {

    /** The burst of a bucket refilled at {@code perSecond}: the policy's own, or a tenth of that rate (at least 1). */
    public int burstFor(double perSecond) {
        return rateBurst > 0 ? rateBurst : Math.max(1, (int) (perSecond / 10));
    }

    /** Envoy's default {@code max_connections}: high enough never to bind by accident, low enough to stop a leak. */
    public static final int DEFAULT_MAX_CONNECTIONS = 1024;

    public ServicePolicy {
        routes = routes == null ? List.of() : List.copyOf(routes);
        concurrencyLimit = concurrencyLimit == null ? ConcurrencyLimit.DEFAULT : concurrencyLimit;
        outboundLimit = outboundLimit == null ? ConcurrencyLimit.OUTBOUND_DEFAULT : outboundLimit;
        authorization = authorization == null ? AuthorizationPolicy.NONE : authorization;
    }

    public ServicePolicy(Duration timeout, RetryPolicy retry, OutlierPolicy outlier, double rateLimit, int rateBurst,
                         double perCallerRate, List<Route> routes, ConcurrencyLimit concurrencyLimit,
                         int maxConnections, ConcurrencyLimit outboundLimit) {
        this(timeout, retry, outlier, rateLimit, rateBurst, perCallerRate, routes, concurrencyLimit, maxConnections,
                outboundLimit, AuthorizationPolicy.NONE, null);
    }

    public ServicePolicy(Duration timeout, RetryPolicy retry, OutlierPolicy outlier, double rateLimit, int rateBurst,
                         double perCallerRate, List<Route> routes, ConcurrencyLimit concurrencyLimit,
                         int maxConnections) {
        this(timeout, retry, outlier, rateLimit, rateBurst, perCallerRate, routes, concurrencyLimit, maxConnections,
                ConcurrencyLimit.OUTBOUND_DEFAULT);
    }

    public ServicePolicy(Duration timeout, RetryPolicy retry, OutlierPolicy outlier, double rateLimit, int rateBurst,
                         double perCallerRate, List<Route> routes) {
        this(timeout, retry, outlier, rateLimit, rateBurst, perCallerRate, routes, ConcurrencyLimit.DEFAULT,
                DEFAULT_MAX_CONNECTIONS);
    }

    public ServicePolicy(Duration timeout, RetryPolicy retry, OutlierPolicy outlier, double rateLimit, int rateBurst,
                         double perCallerRate) {
        this(timeout, retry, outlier, rateLimit, rateBurst, perCallerRate, List.of());
    }

    /**
     * The defaults: a 15 s timeout (Envoy's route default), safe retries with a 20% budget, outlier detection on, the
     * inbound limit fixed at {@code --capacity} with its queue, 1024 connections per endpoint, and the outbound limit
     * at the endpoints' capacities together (beyond, 503 at once rather than the queue).
     */
    public static final ServicePolicy DEFAULT = new ServicePolicy(Duration.ofSeconds(15), RetryPolicy.DEFAULT,
            OutlierPolicy.DEFAULT, 0, 0, 0);

    /** This policy with another inbound concurrency limit. */
    public ServicePolicy withConcurrencyLimit(ConcurrencyLimit limit) {
        return new ServicePolicy(timeout, retry, outlier, rateLimit, rateBurst, perCallerRate, routes, limit,
                maxConnections, outboundLimit, authorization, slo);
    }

    /** This policy with another cap on connections per endpoint (0 = none). */
    public ServicePolicy withMaxConnections(int max) {
        return new ServicePolicy(timeout, retry, outlier, rateLimit, rateBurst, perCallerRate, routes,
                concurrencyLimit, max, outboundLimit, authorization, slo);
    }

    /** This policy with another outbound limit (see {@link ConcurrencyLimit#OUTBOUND_DEFAULT}). */
    public ServicePolicy withOutboundLimit(ConcurrencyLimit limit) {
        return new ServicePolicy(timeout, retry, outlier, rateLimit, rateBurst, perCallerRate, routes,
                concurrencyLimit, maxConnections, limit, authorization, slo);
    }

    /** This policy with another authorization section. */
    public ServicePolicy withAuthorization(AuthorizationPolicy a) {
        return new ServicePolicy(timeout, retry, outlier, rateLimit, rateBurst, perCallerRate, routes,
                concurrencyLimit, maxConnections, outboundLimit, a, slo);
    }

    /** The route a request matches, or null when it takes the service-wide policy. Allocation free. */
    public Route route(String method, String path) {
        for (int i = 0; i < routes.size(); i++) {
            Route r = routes.get(i);
            if ((r.method() == null || r.method().equals(method)) && (r.pathPrefix() == null || path.startsWith(r.pathPrefix()))) {
                return r;
            }
        }
        return null;
    }

    /**
     * A named route of a service. {@code policy} is already merged with the service's (what the route does not set
     * comes from the service), so a request needs one lookup and no merging.
     *
     * @param name       label for metrics and /config
     * @param pathPrefix matches paths starting with it; null matches all
     * @param method     matches this method only; null matches all
     */
    public record Route(String name, String pathPrefix, String method, ServicePolicy policy) {}

    /**
     * @param attempts       total attempts including the first (1 = no retry)
     * @param budgetRatio    retries allowed as a fraction of requests (0.2 = at most 20% extra load)
     * @param minPerSecond   retries always allowed per second, so a quiet service can still retry
     * @param retryOn5xx     retry idempotent requests answered 502/503/504 (a reset before any answer is retried for
     *                       idempotent requests either way, and a refused stream for any request)
     */
    public record RetryPolicy(int attempts, double budgetRatio, double minPerSecond, boolean retryOn5xx) {
        public static final RetryPolicy DEFAULT = new RetryPolicy(3, 0.2, 10, true);
    }

    /**
     * The inbound concurrency limit: how many requests a sidecar lets reach its app at once. Adaptive, it is learned
     * with the Gradient2 algorithm (Netflix concurrency-limits, as the outbound side does for endpoints without a
     * capacity): it rises while the app's latency stays at its no-load level and falls when queueing shows, never
     * above {@code --capacity}; requests beyond it are refused at once with 503 {@code inbound-limit} rather than
     * queued. Not adaptive (the default): exactly {@code --capacity}, with the bounded queue. Off by default until it
     * is measured on a quiet machine: on a busy one its cuts shed load that the fixed limit serves late but serves
     * (docs/resilience.md, measured effects).
     *
     * @param adaptive learn the limit (true) or use {@code --capacity} with the queue (false)
     * @param min      the learned limit never falls below this
     * @param max      nor rises above this; 0 = {@code --capacity} (1000 when the capacity is 0, unlimited)
     * @param initial  where learning starts; 0 = the maximum, so a fresh sidecar sheds nothing until latency rises
     */
    public record ConcurrencyLimit(boolean adaptive, int min, int max, int initial) {
        public static final ConcurrencyLimit FIXED = new ConcurrencyLimit(false, 10, 0, 0);
        public static final ConcurrencyLimit ADAPTIVE = new ConcurrencyLimit(true, 10, 0, 0);
        public static final ConcurrencyLimit DEFAULT = FIXED;
        /**
         * The outbound limit ({@code outbound-limit}) has the same keys; 0 for min and max means the defaults of
         * {@code OutboundLimit} (a floor at the endpoints' capacities together, or 200 when unknown; a ceiling of
         * 1000 where it starts; never above the capacities). Not adaptive means no limit besides the endpoints'
         * capacities and the queue. On by default: beyond what the endpoints can take, 503 at once rather than a
         * queue (docs/resilience.md, burst).
         */
        public static final ConcurrencyLimit OUTBOUND_ADAPTIVE = new ConcurrencyLimit(true, 0, 0, 0);
        public static final ConcurrencyLimit OUTBOUND_OFF = new ConcurrencyLimit(false, 0, 0, 0);
        public static final ConcurrencyLimit OUTBOUND_DEFAULT = OUTBOUND_ADAPTIVE;
    }

    /**
     * @param consecutiveFailures failures in a row (5xx, reset, refused connection) that eject an endpoint
     * @param baseEjection         first ejection time; doubles with each ejection of the same endpoint
     * @param maxEjection          cap on the ejection time
     * @param maxEjectedPercent    never eject more than this share of a service's endpoints
     */
    public record OutlierPolicy(int consecutiveFailures, Duration baseEjection, Duration maxEjection,
                                int maxEjectedPercent) {
        public static final OutlierPolicy DEFAULT = new OutlierPolicy(5, Duration.ofSeconds(5), Duration.ofSeconds(60), 50);
    }

    /**
     * A service level objective ({@code slo: {p99: 200ms, error-rate: 1%}}): either part may be null (not set).
     *
     * @param p99       the latency 99% of the service's requests stay under
     * @param errorRate the share of requests (0..1) allowed to fail
     */
    public record Slo(Duration p99, Double errorRate) {}
}
