package dev.weft.dataplane.upstream;

import dev.weft.dataplane.http.Http1ResponseDecoder;
import dev.weft.dataplane.http.Http1Writer;
import dev.weft.dataplane.transport.Transport;
import dev.weft.registry.Endpoint;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToIntFunction;

/**
 * Requests over pooled keep-alive HTTP/1.1 connections: to the local app (inbound side), or to peer sidecars with
 * {@code --mesh-protocol http1}. Each Worker loop has its own stack of idle connections per address, registered on
 * that loop, so a call never leaves its thread and the pool needs no lock. One call per connection at a time
 * (HTTP/1.1); how many connections are busy is bounded by admission (capacity slots) before {@link #open}.
 *
 * <p>Circuit breaking on connections (Envoy's {@code max_connections}): the connections open to one address, over
 * all Workers and idle ones included, never exceed the cap the destination's policy sets; a call that would need one
 * more fails at once with {@link Upstream.CircuitOpenException} and is counted ({@link #circuitOpen()}). The count
 * is an atomic per address, taken before the dial and given back when the channel closes (or the dial fails). Idle
 * connections count, so when the cap refuses a call each other Worker closes one of its idle connections to that
 * address: the next call finds room instead of being refused until idle connections time out.
 *
 * <p>Each connection is an {@link Http1Connection}, which is also the call: it writes the request, reads the answer,
 * and comes back to its Worker's stack here when both are done.
 *
 * <p>Thread: the Worker loop given to {@link #open}, for the stacks; the counters are shared by the Workers
 * (atomics). Buffers: none here (see {@link Http1Connection}).
 */
public final class HttpUpstream implements Upstream {

    private final Transport transport;
    final String description;
    private final Map<EventLoop, Map<String, ArrayDeque<Http1Connection>>> idle = new ConcurrentHashMap<>();
    private final LongAdder opened = new LongAdder();
    private final LongAdder connectFailures = new LongAdder();
    private final LongAdder circuitOpen = new LongAdder();
    final LongAdder protocolErrors = new LongAdder();
    private final Map<String, AtomicInteger> openPerAddress = new ConcurrentHashMap<>();
    private final ToIntFunction<Endpoint> maxConnections;
    final Duration answerTimeout;
    final LongAdder answerTimeouts = new LongAdder();

    /** @param description names the upstream in errors, e.g. "app" or "peer sidecar" */
    public HttpUpstream(Transport transport, String description) {
        this(transport, description, e -> 0, Duration.ZERO);
    }

    /**
     * @param maxConnections the most connections to an endpoint, read at each dial (so a policy change applies to
     *                       the next one); 0 for no cap
     * @param answerTimeout  longest an answer's body may go without a byte once its head came; zero for no limit
     */
    public HttpUpstream(Transport transport, String description, ToIntFunction<Endpoint> maxConnections,
                        Duration answerTimeout) {
        this.transport = transport;
        this.description = description;
        this.maxConnections = maxConnections;
        this.answerTimeout = answerTimeout;
    }

    /** Answers cut because their body stopped coming for the answer timeout ({@code --body-timeout}). */
    public long answerTimeouts() {
        return answerTimeouts.sum();
    }

    /** Calls failed fast because their endpoint had as many connections as allowed. */
    public long circuitOpen() {
        return circuitOpen.sum();
    }

    /** Answers refused because they broke HTTP/1.1 (502 {@code app-protocol-error}). */
    public long protocolErrors() {
        return protocolErrors.sum();
    }

    public long opened() {
        return opened.sum();
    }

    public long connectFailures() {
        return connectFailures.sum();
    }

    @Override
    public Future<UpstreamCall> open(EventLoop loop, Endpoint endpoint, String address, UpstreamListener listener) {
        ArrayDeque<Http1Connection> stack = idle.computeIfAbsent(loop, l -> new HashMap<>())
                .computeIfAbsent(address, k -> new ArrayDeque<>());
        Http1Connection c;
        while ((c = stack.pollLast()) != null) {
            if (c.channel().isActive()) {
                return c.reuse(listener);
            }
        }
        AtomicInteger open = openPerAddress.computeIfAbsent(address, k -> new AtomicInteger());
        int max = maxConnections.applyAsInt(endpoint);
        if (!tryTake(open, max)) {
            circuitOpen.increment();
            closeOneIdleElsewhere(loop, address);
            return loop.newFailedFuture(new CircuitOpenException(description + " at " + address + " already has "
                    + max + " connections (circuit-breaker max-connections)"));
        }
        Promise<UpstreamCall> promise = loop.newPromise();
        Http1Connection conn = new Http1Connection(this, stack, address);
        new Bootstrap()
                .group(loop)
                .channel(transport.channelClass())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 2000)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        // Requests are written as bytes by Http1Writer; the connection tells the decoder, for each
                        // one, whether its answer is to a HEAD (and so has no body).
                        ch.pipeline().addLast("http-decoder", new Http1ResponseDecoder());
                        // Idle keep-alive connections close after a minute so a quiet sidecar holds few sockets.
                        // Reads only: watching writes would put a real promise on every write (see MeshSession).
                        ch.pipeline().addLast("idle", new IdleStateHandler(60, 0, 0, TimeUnit.SECONDS));
                        ch.pipeline().addLast("upstream", conn);
                    }
                })
                .connect(new InetSocketAddress(endpoint.host(), endpoint.port()))
                .addListener(f -> {
                    if (f.isSuccess()) {
                        opened.increment();
                        conn.channel().closeFuture().addListener(x -> open.decrementAndGet());
                        promise.setSuccess(conn.begin(listener));
                    } else {
                        open.decrementAndGet();
                        connectFailures.increment();
                        promise.setFailure(new ConnectException(description + " at " + address
                                + " is not accepting connections (" + f.cause().getMessage() + ")", f.cause()));
                    }
                });
        return promise;
    }

    /** Asks every other Worker to close one idle connection to {@code address}, on its own loop (the stacks are not shared). */
    private void closeOneIdleElsewhere(EventLoop self, String address) {
        idle.forEach((loop, byAddress) -> {
            if (loop != self) {
                loop.execute(() -> {
                    ArrayDeque<Http1Connection> stack = byAddress.get(address);
                    Http1Connection c = stack == null ? null : stack.pollFirst();
                    if (c != null) {
                        c.channel().close();
                    }
                });
            }
        });
    }

    /** Counts one more connection unless {@code max} (0 = no cap) are already open. Lock free. */
    private static boolean tryTake(AtomicInteger open, int max) {
        while (true) {
            int n = open.get();
            if (max > 0 && n >= max) {
                return false;
            }
            if (open.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }
}
