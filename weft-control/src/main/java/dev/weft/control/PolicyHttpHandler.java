package dev.weft.control;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.concurrent.ScheduledFuture;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The policy API: {@code PUT /v1/policies/NAME} (YAML body) stores a document, {@code DELETE} removes it, and
 * {@code GET /v1/policies?revision=N&wait=25s} is a long poll that answers as soon as the store is past revision N
 * (at once if it already is), or with the unchanged snapshot when the wait runs out. Other paths pass on to the
 * registry API.
 *
 * <p>Thread: the connection's event loop; answers from the {@link ControlBackend} (a stored change, a waiting poll's
 * wake-up) arrive on the backend's threads and hop back here through {@code ctx.executor()}. Buffers: requests are
 * released here once handled (or passed on); responses by the encoder.
 */
final class PolicyHttpHandler extends RouteHandler {
    private static final String PREFIX = "/v1/policies";
    private static final long MAX_WAIT_SECONDS = 60;

    private final ControlBackend store;

    PolicyHttpHandler(ControlBackend store) {
        this.store = store;
    }

    @Override
    protected boolean serves(String path) {
        return path.equals(PREFIX) || path.startsWith(PREFIX + "/");
    }

    @Override
    protected void handle(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri) {
        String path = uri.path();
        // One request at a time, as in ControlHttpHandler: answers may come from the backend later, and must leave in
        // request order; write() reads again once the answer is queued.
        ctx.channel().config().setAutoRead(false);
        try {
            boolean keepAlive = HttpUtil.isKeepAlive(req);
            if (path.equals(PREFIX) && req.method().equals(HttpMethod.GET)) {
                poll(ctx, uri, keepAlive);
            } else if (path.startsWith(PREFIX + "/") && (req.method().equals(HttpMethod.PUT) || req.method().equals(HttpMethod.DELETE))) {
                String name = URLDecoder.decode(path.substring(PREFIX.length() + 1), StandardCharsets.UTF_8);
                if (!name.matches("[A-Za-z0-9._-]{1,128}")) {
                    error(ctx, keepAlive, 400, "invalid-name", "invalid policy name '" + name
                            + "' (expected 1-128 letters, digits, '.', '_' or '-')");
                    return;
                }
                String doc = req.method().equals(HttpMethod.PUT) ? req.content().toString(StandardCharsets.UTF_8) : null;
                if (doc != null && doc.isBlank()) {
                    error(ctx, keepAlive, 400, "empty-policy", "empty policy document for '" + name + "'");
                    return;
                }
                answer(ctx, keepAlive, store.putPolicy(name, doc));
            } else {
                error(ctx, keepAlive, 405, "method-not-allowed", req.method() + " " + path
                        + " (expected GET /v1/policies, PUT or DELETE /v1/policies/NAME)");
            }
        } finally {
            req.release();
        }
    }

    private void poll(ChannelHandlerContext ctx, QueryStringDecoder uri, boolean keepAlive) {
        long revision = param(uri, "revision", -1);
        long wait = Math.min(MAX_WAIT_SECONDS, parseSeconds(uri.parameters().getOrDefault("wait", java.util.List.of("0")).getFirst()));
        if (wait <= 0) {
            answer(ctx, keepAlive, store.policies());
            return;
        }
        boolean[] done = new boolean[1];
        ScheduledFuture<?>[] timer = new ScheduledFuture<?>[1];
        Runnable[] cancel = new Runnable[1];
        cancel[0] = store.awaitPolicyChange(revision, s -> onEventLoop(ctx, () -> {
            if (!done[0]) {
                done[0] = true;
                if (timer[0] != null) {
                    timer[0].cancel(false);
                }
                reply(ctx, keepAlive, 200, s);
            }
        }));
        if (!done[0]) {
            timer[0] = ctx.executor().schedule(() -> {
                if (!done[0]) {
                    done[0] = true;
                    cancel[0].run();
                    answer(ctx, keepAlive, store.policies());
                }
            }, wait, TimeUnit.SECONDS);
            ctx.channel().closeFuture().addListener(f -> cancel[0].run());
        }
    }

    private static long param(QueryStringDecoder uri, String name, long dflt) {
        var v = uri.parameters().get(name);
        try {
            return v == null ? dflt : Long.parseLong(v.getFirst());
        } catch (NumberFormatException e) {
            return dflt;
        }
    }

    private static long parseSeconds(String v) {
        try {
            return Long.parseLong(v.endsWith("s") ? v.substring(0, v.length() - 1) : v);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** Answers once the backend completes, from whichever thread it completes on, writing on the event loop. */
    private void answer(ChannelHandlerContext ctx, boolean keepAlive, CompletableFuture<ControlBackend.Policies> result) {
        result.whenComplete((s, failure) -> onEventLoop(ctx, () -> {
            if (failure == null) {
                reply(ctx, keepAlive, 200, s);
                return;
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            if (cause instanceof ControlException e) {
                error(ctx, keepAlive, e.status(), e.code(), e.getMessage());
            } else {
                error(ctx, keepAlive, 500, "internal", "internal error: " + cause);
            }
        }));
    }

    private static void onEventLoop(ChannelHandlerContext ctx, Runnable task) {
        try {
            ctx.executor().execute(task);
        } catch (RejectedExecutionException e) {
            // The event loop is shutting down with the server; the connection is going away anyway.
        }
    }

    private void reply(ChannelHandlerContext ctx, boolean keepAlive, int status, ControlBackend.Policies s) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("revision", s.revision());
        body.put("policies", s.policies());
        write(ctx, keepAlive, status, ControlJson.bytes(body));
    }

    private void error(ChannelHandlerContext ctx, boolean keepAlive, int status, String code, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", message);
        body.put("code", code);
        write(ctx, keepAlive, status, ControlJson.bytes(body));
    }

    private void write(ChannelHandlerContext ctx, boolean keepAlive, int status, byte[] json) {
        JsonAnswers.write(ctx, keepAlive, status, json);
    }
}
