package dev.weft.dataplane.outbound;

import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.registry.ServiceNames;

import java.util.Locale;

/**
 * Names where an HTTP request goes: which {@link Cluster} admits it, and the authority sent upstream. Three kinds:
 * a listener bound to one service ({@code --upstream NAME=...}), the Host header ({@code --outbound}), or the local
 * app (a provider sidecar's inbound HTTP/1.1 listener).
 */
public interface Destination {

    /** @throws RouteException when the request names no usable destination; its message is shown to the client */
    Cluster resolve(RequestHead request) throws RouteException;

    /** The authority (Host) to send upstream. */
    String authority(RequestHead request, Cluster cluster);

    static Destination bound(Router router, String service) {
        return new Destination() {
            @Override
            public Cluster resolve(RequestHead request) throws RouteException {
                return routed(router, service);
            }

            @Override
            public String authority(RequestHead request, Cluster cluster) {
                return cluster.service();
            }
        };
    }

    static Destination byHost(Router router) {
        return new Destination() {
            @Override
            public Cluster resolve(RequestHead request) throws RouteException {
                String host = request.authority();
                if (host == null || host.isBlank()) {
                    throw new RouteException(400, "bad-request",
                            "missing Host header: name the destination service in Host (e.g. Host: provider)");
                }
                String service = serviceOf(host);
                // Checked before the Router sees it: a name the registry cannot hold would start a watch that
                // never resolves and take one of the Router's slots for distinct destinations.
                if (!ServiceNames.isValid(service)) {
                    throw new RouteException(400, "bad-request", "Host '" + host + "' names no service: a service"
                            + " name has " + ServiceNames.RULE);
                }
                return routed(router, service);
            }

            @Override
            public String authority(RequestHead request, Cluster cluster) {
                return cluster.service();
            }
        };
    }

    /** The local app behind this sidecar; the caller's Host is passed through unchanged. */
    static Destination app(Cluster app) {
        return new Destination() {
            @Override
            public Cluster resolve(RequestHead request) {
                return app;
            }

            @Override
            public String authority(RequestHead request, Cluster cluster) {
                String host = request.authority();
                return host != null ? host : cluster.service();
            }
        };
    }

    private static Cluster routed(Router router, String service) throws RouteException {
        Cluster c = router.cluster(service);
        if (c == null) {
            throw new RouteException(503, "unknown-service",
                    "unknown service '" + service + "': too many distinct destinations");
        }
        return c;
    }

    /** "provider:8080" → "provider"; keeps IPv6 literals whole. */
    static String serviceOf(String host) {
        int colon = host.lastIndexOf(':');
        if (colon > 0 && host.indexOf(']') < colon) {
            host = host.substring(0, colon);
        }
        return host.trim().toLowerCase(Locale.ROOT);
    }

    /** No destination for this request. */
    final class RouteException extends Exception {
        private final int status;
        private final String kind;

        public RouteException(int status, String kind, String message) {
            super(message, null, false, false);
            this.status = status;
            this.kind = kind;
        }

        public int status() {
            return status;
        }

        public String kind() {
            return kind;
        }
    }
}
