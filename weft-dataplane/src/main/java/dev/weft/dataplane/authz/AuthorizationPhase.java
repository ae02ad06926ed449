package dev.weft.dataplane.authz;

import dev.weft.dataplane.exchange.ExchangeContext;
import dev.weft.dataplane.exchange.ExchangeError;
import dev.weft.dataplane.exchange.Phase;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.resilience.Deadlines;

import java.util.concurrent.atomic.LongAdder;

/**
 * The inbound stack's authorization: the local service's {@code authorization} section decides, from the caller's
 * identity ({@code x-weft-caller}, as the receiving side set it), the method and the path, whether the request may
 * reach the app. A denied one is answered 403 {@code forbidden} naming the rule, counted in
 * {@code weft_authz_denied_total{rule}}, and the app never sees it. The access log and the span show it by its
 * error kind, as every refusal of the mesh.
 *
 * <p>Reads the app cluster's policy (so a new document is in force for the next request) and allocates nothing per
 * request: the rules and each rule's 403 were compiled when the document was applied ({@link AuthorizationPolicy}).
 *
 * <p>Thread: the exchange's loop; stateless but for the counters (LongAdders, shared by the Workers).
 */
public final class AuthorizationPhase implements Phase {
    private final SidecarMetrics metrics;

    public AuthorizationPhase(SidecarMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public String name() {
        return "authorization";
    }

    @Override
    public ExchangeError onRequest(ExchangeContext x) {
        AuthorizationPolicy.Rule denied = x.cluster().policy().authorization()
                .decide(x.head().get(Deadlines.CALLER_HEADER), x.head().method(), x.head().path());
        if (denied == null) {
            return null;
        }
        deniedBy(denied.name()).increment();
        return denied.error();
    }

    /** The denial counter of {@code rule}, made at the rule's first denial; found without a lambda after that. */
    private LongAdder deniedBy(String rule) {
        LongAdder counter = metrics.authzDenied.get(rule);
        return counter != null ? counter : metrics.authzDenied.computeIfAbsent(rule, first -> new LongAdder());
    }
}
