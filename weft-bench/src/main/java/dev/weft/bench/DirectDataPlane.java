package dev.weft.bench;

import java.time.Duration;
import java.util.List;

/**
 * No mesh: the consumer (or the load generator, per hop) calls the provider itself. {@link Experiment} then runs a
 * single provider whose limit is the three providers' together, so the baseline is not held back by a balancing
 * it does not have. It shows what the apps and the machine give without any proxy.
 */
public record DirectDataPlane() implements DataPlane {
    public static final String NAME = "direct";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "no proxy: the consumer calls one provider holding the three providers' capacity";
    }

    @Override
    public int threads() {
        return NO_PROXY_THREADS;
    }

    @Override
    public boolean proxied() {
        return false;
    }

    @Override
    public Proxy startProviderSide(Context ctx, Upstream provider) {
        return new Proxy("none", -1, provider.port(), Duration.ZERO, 0);
    }

    @Override
    public Proxy startConsumerSide(Context ctx, int listenPort, int appPort, List<Upstream> upstreams) {
        throw new UnsupportedOperationException("direct has no consumer-side proxy");
    }
}
