package dev.weft.dataplane.observe;

/**
 * Two observers seeing the same exchanges: the sidecar's own {@link Observability} and one supplied by an embedder
 * (tests, a benchmark harness). Each event goes to the first, then the second. Thread: as {@link ExchangeObserver}.
 */
public final class CompositeObserver implements ExchangeObserver {
    private final ExchangeObserver first;
    private final ExchangeObserver second;

    private CompositeObserver(ExchangeObserver first, ExchangeObserver second) {
        this.first = first;
        this.second = second;
    }

    /** Either alone when the other is {@link #NOOP}. */
    public static ExchangeObserver of(ExchangeObserver first, ExchangeObserver second) {
        if (first == NOOP) {
            return second;
        }
        if (second == NOOP) {
            return first;
        }
        return new CompositeObserver(first, second);
    }

    @Override
    public ExchangeTrace start(Direction direction, String localService, String method, String path,
                               HeaderAccess headers, String peer, long startNanos) {
        ExchangeTrace a = first.start(direction, localService, method, path, headers, peer, startNanos);
        ExchangeTrace b = second.start(direction, localService, method, path, headers, peer, startNanos);
        return new ExchangeTrace() {
            @Override
            public void routed(String destinationService, String route) {
                a.routed(destinationService, route);
                b.routed(destinationService, route);
            }

            @Override
            public void admitted(String destinationService, String endpointId, String endpointAddress) {
                a.admitted(destinationService, endpointId, endpointAddress);
                b.admitted(destinationService, endpointId, endpointAddress);
            }

            @Override
            public void connected() {
                a.connected();
                b.connected();
            }

            @Override
            public void sent(long nanos) {
                a.sent(nanos);
                b.sent(nanos);
            }

            @Override
            public void firstByte(int status) {
                a.firstByte(status);
                b.firstByte(status);
            }

            @Override
            public void end(int status, long bytesIn, long bytesOut, String error, long nanos) {
                a.end(status, bytesIn, bytesOut, error, nanos);
                b.end(status, bytesIn, bytesOut, error, nanos);
            }
        };
    }
}
