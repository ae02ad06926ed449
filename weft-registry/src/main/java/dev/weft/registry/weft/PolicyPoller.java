package dev.weft.registry.weft;

import dev.weft.registry.support.Backoff;

import dev.weft.registry.PolicyListener;
import dev.weft.registry.Watch;

import dev.weft.registry.http.SmallHttpClient;
import dev.weft.registry.support.JsonValues;

import java.time.Duration;
import java.util.Map;

/**
 * Watches the control plane's policy documents with a long poll: {@code GET /v1/policies?revision=N&wait=25s}
 * returns at once when the store is past revision N, otherwise when it changes (or after 25 s with no change). A change
 * therefore reaches every sidecar as soon as it is stored, like a push, without a stream per sidecar to keep alive.
 *
 * <p>Thread: one virtual thread per watch, which parks while a poll is outstanding. Listener calls happen on it.
 */
final class PolicyPoller implements Watch {
    private static final Duration WAIT = Duration.ofSeconds(25);

    private final WeftRegistry registry;
    private final PolicyListener listener;
    private final Thread thread;
    private volatile boolean closed;

    record Snapshot(long revision, Map<String, String> policies) {
        static Snapshot read(byte[] json) throws java.io.IOException {
            Map<String, Object> m = JsonValues.readObject(json);
            return new Snapshot(JsonValues.number(m, "revision"), JsonValues.strings(m, "policies"));
        }
    }

    PolicyPoller(WeftRegistry registry, PolicyListener listener) {
        this.registry = registry;
        this.listener = listener;
        this.thread = Thread.ofVirtual().name("weft-policy-watch").start(this::run);
    }

    private void run() {
        long revision = -1;
        Backoff backoff = new Backoff();
        while (!closed && !registry.isClosed()) {
            try {
                String path = "/v1/policies?revision=" + revision + "&wait=" + WAIT.toSeconds() + "s";
                SmallHttpClient.Response response = registry.http.sendBlocking("GET", registry.uri(path),
                        registry.headers("GET", path, null, null), null, 0, 0, WAIT.plusSeconds(5));
                if (response.status() != 200) {
                    throw new java.io.IOException("GET /v1/policies: " + registry.errorText(
                            new WeftRegistry.Reply(response.status(), response.body())));
                }
                Snapshot s = Snapshot.read(response.body());
                backoff.reset();
                if (s.revision() != revision) {
                    revision = s.revision();
                    listener.onPolicies(s.policies() == null ? Map.of() : Map.copyOf(s.policies()));
                }
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                if (closed) {
                    return;
                }
                try {
                    Thread.sleep(backoff.next().toMillis());
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
    }
}
