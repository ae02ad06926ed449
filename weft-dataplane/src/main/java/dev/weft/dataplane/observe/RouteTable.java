package dev.weft.dataplane.observe;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Names requests by method and path prefix for metric labels and span names. Paths themselves never become labels:
 * a request no route names is {@value #DEFAULT}, so the number of series stays bounded by the routes configured.
 *
 * <p>Immutable; {@link #match} runs on Worker loops and allocates nothing.
 */
public final class RouteTable {
    public static final String DEFAULT = "default";
    /** More would make every request scan a long list; a mesh that needs more names routes by policy. */
    public static final int MAX_ROUTES = 64;
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,62}");
    private static final Pattern METHOD = Pattern.compile("[A-Z]{1,16}");

    /**
     * One named route.
     *
     * @param name   label value, e.g. {@code users}
     * @param method HTTP method it is limited to, or null for any
     * @param prefix path prefix, starting with '/'
     */
    public record Route(String name, String method, String prefix) {
        public Route {
            if (!NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("invalid route name '" + name
                        + "' (expected lower-case letters, digits, '.', '_' or '-', at most 63)");
            }
            if (name.equals(DEFAULT)) {
                throw new IllegalArgumentException("route name 'default' is reserved for requests no route names");
            }
            if (method != null && !METHOD.matcher(method).matches()) {
                throw new IllegalArgumentException("invalid method '" + method + "' in route '" + name
                        + "' (expected e.g. GET or POST)");
            }
            if (prefix == null || !prefix.startsWith("/")) {
                throw new IllegalArgumentException("invalid path prefix '" + prefix + "' in route '" + name
                        + "' (expected a path starting with /)");
            }
        }

        /** Parses {@code NAME=[METHOD:]PREFIX}, e.g. {@code users=/users} or {@code create-user=POST:/users}. */
        public static Route parse(String spec) {
            int eq = spec.indexOf('=');
            if (eq <= 0 || eq == spec.length() - 1) {
                throw new IllegalArgumentException("invalid route '" + spec
                        + "' (expected NAME=[METHOD:]PATH_PREFIX, e.g. users=/users or create-user=POST:/users)");
            }
            String name = spec.substring(0, eq).trim().toLowerCase(Locale.ROOT);
            String rest = spec.substring(eq + 1).trim();
            String method = null;
            int colon = rest.indexOf(':');
            if (colon > 0 && !rest.startsWith("/")) {
                method = rest.substring(0, colon).toUpperCase(Locale.ROOT);
                rest = rest.substring(colon + 1);
            }
            return new Route(name, method, rest);
        }
    }

    private final Route[] routes;
    private final List<String> names;

    public RouteTable(List<Route> routes) {
        if (routes.size() > MAX_ROUTES) {
            throw new IllegalArgumentException(routes.size() + " routes named (expected at most " + MAX_ROUTES + ")");
        }
        this.routes = routes.toArray(Route[]::new);
        List<String> n = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Route r : routes) {
            if (seen.add(r.name())) {
                n.add(r.name());
            }
        }
        n.add(DEFAULT);
        this.names = List.copyOf(n);
    }

    /** The first route whose method and prefix match, in the order given; {@value #DEFAULT} when none does. */
    public String match(String method, String path) {
        for (Route r : routes) {
            if ((r.method == null || r.method.equals(method)) && path.startsWith(r.prefix)) {
                return r.name;
            }
        }
        return DEFAULT;
    }

    /** Every name {@link #match} can return. */
    public List<String> names() {
        return names;
    }
}
