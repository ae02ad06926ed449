package dev.weft.examples;

import java.net.InetSocketAddress;
import java.net.URI;

/** Where the consumer sends its calls, parsed once from {@code --provider-url http://HOST:PORT[/path]}. */
record ProviderTarget(URI url, InetSocketAddress address, String hostHeader, String path) {
    static ProviderTarget parse(URI url) {
        if (url == null || !"http".equalsIgnoreCase(url.getScheme()) || url.getHost() == null || url.getPort() < 0) {
            throw new IllegalArgumentException("invalid provider URL '" + url + "' (expected http://HOST:PORT, "
                    + "e.g. http://127.0.0.1:9080, the consumer sidecar's local port for the provider)");
        }
        String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        return new ProviderTarget(url, InetSocketAddress.createUnresolved(url.getHost(), url.getPort()),
                url.getHost() + ":" + url.getPort(), path);
    }

    InetSocketAddress resolved() {
        return new InetSocketAddress(address.getHostString(), address.getPort());
    }
}
