package dev.weft.control;

import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.QueryStringDecoder;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Who may make a request to the control plane's API, decided from its method and path alone, before any handler
 * sees it (docs/security.md, "Who may do what"). Pure; any thread.
 *
 * <p>The path is split into segments and each decoded exactly as {@link ControlHttpHandler} does, so the service a
 * registration is checked against is the one the handler writes. A write this class does not know needs the operator
 * (the handler then answers 404 or 405 to the operator): a new write route is closed until it is listed here.
 */
final class ApiAccess {
    /** What a request needs. */
    enum Kind {
        /** Anyone: probes, the CA's public routes, the dashboard's static files. */
        OPEN,
        /** A topology read: any authenticated caller; no credentials from loopback in local mode. */
        READ,
        /**
         * Span collection: any authenticated caller (a sidecar, the operator); none from loopback, whatever the store,
         * so that a Zipkin library or an etcd sidecar on the control plane's host can post (docs/security.md).
         */
        SPANS,
        /**
         * Any authenticated caller: a lease's grant; its keepalive and revoke, which the handler then allows only to
         * the lease's owner ({@link LeaseOwners}).
         */
        SIDECAR,
        /** The operator, or a sidecar of {@link Need#service}: its own endpoints. */
        SERVICE,
        /** The operator only: policies, join tokens. */
        OPERATOR
    }

    record Need(Kind kind, String service) {
        static final Need OPEN = new Need(Kind.OPEN, null);
        static final Need READ = new Need(Kind.READ, null);
        static final Need SIDECAR = new Need(Kind.SIDECAR, null);
        static final Need SPANS = new Need(Kind.SPANS, null);
        static final Need OPERATOR = new Need(Kind.OPERATOR, null);
    }

    private ApiAccess() {}

    static Need of(HttpMethod method, String rawTarget) {
        QueryStringDecoder uri = new QueryStringDecoder(rawTarget);
        String path = uri.path();
        boolean read = method.equals(HttpMethod.GET) || method.equals(HttpMethod.HEAD);
        // Families whose every route only reads take any method under their read rule: the handler answers 405 to
        // the others, which is more use to a caller than a 401 for a request that could never have worked.
        if (path.equals("/metrics")) {
            return Need.OPEN;   // counters only, no service names (the sidecars' own /metrics carry those)
        }
        if (path.equals("/ui") || path.startsWith("/ui/")) {
            return Need.OPEN;   // the page's files; its data is under /v1/ui/
        }
        if (path.startsWith(ControlHttpHandler.API_PREFIX)) {
            // Posted spans feed ./weft trace, diagnose and the dashboard, so posting needs credentials; reading
            // traces back reveals the topology.
            return read ? Need.READ : path.equals("/api/v2/spans") ? Need.SPANS : Need.OPERATOR;
        }
        List<String> p = segments(uri.rawPath());
        if (p.size() < 2 || !p.get(0).equals("v1")) {
            return read ? Need.READ : Need.OPERATOR;
        }
        return switch (p.get(1)) {
            case "health", "trust-bundle" -> Need.OPEN;
            // A certificate request carries its own proof (a join token, or the current certificate's signature).
            case "certificates" -> Need.OPEN;
            case "ui", "diagnose", "watch" -> Need.READ;
            case "tokens" -> Need.OPERATOR;
            case "policies" -> read ? Need.READ : Need.OPERATOR;
            case "leases" -> read ? Need.READ : Need.SIDECAR;
            case "services" -> p.size() == 5 && p.get(3).equals("endpoints") && !read
                    ? new Need(Kind.SERVICE, p.get(2)) : p.size() <= 3 ? Need.READ : read ? Need.READ : Need.OPERATOR;
            default -> read ? Need.READ : Need.OPERATOR;
        };
    }

    /** The path's segments, decoded one by one, empty ones skipped: {@link ControlHttpHandler}'s own reading. */
    static List<String> segments(String rawPath) {
        List<String> out = new ArrayList<>();
        for (String s : rawPath.split("/")) {
            if (!s.isEmpty()) {
                out.add(QueryStringDecoder.decodeComponent(s, StandardCharsets.UTF_8));
            }
        }
        return out;
    }
}
