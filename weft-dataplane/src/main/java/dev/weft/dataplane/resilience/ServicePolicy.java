package dev.weft.dataplane.resilience;

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
 * @param rateBurst      burst the rate limit tolerates
 * @param perCallerRate  requests per second allowed per calling service (0 = unlimited)
 * @param routes         routes with their own timeout, retries or rate limit, first match wins
 */
public record ServicePolicy(Duration timeout, RetryPolicy retry, OutlierPolicy outlier, double rateLimit,
                            int rateBurst, double perCallerRate, List<Route> routes) {

    public ServicePolicy {
        routes = routes == null ? List.of() : List.copyOf(routes);
    }

    public ServicePolicy(Duration timeout, RetryPolicy retry, OutlierPolicy outlier, double rateLimit, int rateBurst,
                         double perCallerRate) {
        this(timeout, retry, outlier, rateLimit, rateBurst, perCallerRate, List.of());
    }

    /** The defaults: a 15 s timeout (Envoy's route default), safe retries with a 20% budget, outlier detection on. */
    public static final ServicePolicy DEFAULT = new ServicePolicy(Duration.ofSeconds(15), RetryPolicy.DEFAULT,
            OutlierPolicy.DEFAULT, 0, 0, 0);

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
     * @param retryOn5xx     retry idempotent requests answered 502/503/504 or reset before answering
     */
    public record RetryPolicy(int attempts, double budgetRatio, double minPerSecond, boolean retryOn5xx) {
        public static final RetryPolicy DEFAULT = new RetryPolicy(3, 0.2, 10, true);
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
}
