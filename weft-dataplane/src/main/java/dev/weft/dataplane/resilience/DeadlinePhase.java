package dev.weft.dataplane.resilience;

import dev.weft.dataplane.exchange.ExchangeContext;
import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.exchange.Phase;
import dev.weft.dataplane.http.Decimals;

import java.util.concurrent.TimeUnit;

/**
 * The request's deadline: the policy's timeout, cut short by any budget that came with it
 * ({@code x-weft-deadline-ms}, see {@link Deadlines}). The exchange arms its Worker's {@link DeadlineTimer} with it
 * and passes on what is left at each send; past it, the exchange answers 504.
 *
 * <p>Thread: the exchange's loop; stateless.
 */
public final class DeadlinePhase implements Phase {
    @Override
    public String name() {
        return "deadline";
    }

    @Override
    public ExchangeError onRequest(ExchangeContext x) {
        x.deadline(Deadlines.deadline(x.startNanos(), x.policy().timeout(), x.head().get(Deadlines.DEADLINE_HEADER)));
        return null;
    }

    /** Passes on what is left of the budget, so that the next hop (and an app that forwards it) stays inside it. */
    @Override
    public void onSend(ExchangeContext x) {
        if (x.deadline() != 0) {
            long remainingMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(x.deadline() - System.nanoTime()));
            x.head().fields().set(Deadlines.DEADLINE_HEADER, Decimals.of(remainingMs));
        }
    }
}
