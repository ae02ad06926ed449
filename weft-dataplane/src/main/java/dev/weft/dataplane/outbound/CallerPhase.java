package dev.weft.dataplane.outbound;

import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.exchange.Phase;
import dev.weft.dataplane.exchange.ExchangeContext;
import dev.weft.dataplane.resilience.Deadlines;

/**
 * Tells the callee who calls ({@code x-weft-caller}): its per-caller rate limits and the service map key on it. The
 * value is this sidecar's own service, set over whatever the app sent, so an app cannot speak for another service.
 *
 * <p>Thread: the exchange's loop; stateless.
 */
public final class CallerPhase implements Phase {
    private final String localService;

    public CallerPhase(String localService) {
        this.localService = localService;
    }

    @Override
    public String name() {
        return "caller";
    }

    @Override
    public ExchangeError onRequest(ExchangeContext x) {
        x.head().fields().set(Deadlines.CALLER_HEADER, localService);
        return null;
    }
}
