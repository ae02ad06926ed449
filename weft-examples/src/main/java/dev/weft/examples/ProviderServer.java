package dev.weft.examples;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The paper's Provider: answers {@code hashCode(data)} after a fixed delay and refuses work beyond a concurrency
 * limit with an immediate 503, which is the back-pressure the mesh has to route around.
 *
 * <p>The delay is a timer on the event loop, never a sleeping thread, so one loop can hold thousands of requests
 * and the limit (not the thread count) is what caps the provider. The counters are shared by all event loops.
 */
public final class ProviderServer implements AutoCloseable {
    /** Largest request body accepted; the benchmark sends a few dozen bytes. */
    static final int MAX_BODY_BYTES = 1 << 20;

    /**
     * @param listen         where to bind; port 0 picks a free one (read it back from {@link #address()})
     * @param name           reported in {@code x-provider} and {@code /stats}, e.g. small, medium, large
     * @param maxConcurrency requests held at once; more are refused with 503
     * @param delay          how long each request "computes" before it is answered
     * @param ioThreads      event loops; one is plenty since the work is a timer and a hash
     */
    public record Settings(HostPort listen, String name, int maxConcurrency, Duration delay, int ioThreads) {
        public Settings {
            Objects.requireNonNull(listen, "listen");
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(delay, "delay");
            if (maxConcurrency < 1) {
                throw new IllegalArgumentException("max-concurrency must be at least 1 (got " + maxConcurrency + ")");
            }
            if (delay.isNegative()) {
                throw new IllegalArgumentException("delay must not be negative (got " + delay.toMillis() + " ms)");
            }
            if (ioThreads < 1) {
                throw new IllegalArgumentException("io-threads must be at least 1 (got " + ioThreads + ")");
            }
        }

        /** The paper's provider: 200 concurrent requests, 50 ms each, on one event loop. */
        public static Settings paper(HostPort listen, String name) {
            return new Settings(listen, name, 200, Duration.ofMillis(50), 1);
        }
    }

    private final Settings settings;
    private final EventLoopGroup group;
    private final Channel serverChannel;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final LongAdder served = new LongAdder();
    private final LongAdder rejected = new LongAdder();

    private ProviderServer(Settings settings) throws InterruptedException {
        this.settings = settings;
        this.group = NettyTransport.newGroup(settings.ioThreads(), "provider-" + settings.name());
        try {
            ServerBootstrap bootstrap = new ServerBootstrap()
                    .group(group)
                    .channel(NettyTransport.serverChannelClass())
                    .option(ChannelOption.SO_BACKLOG, 4096)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline()
                                    .addLast("http", new HttpServerCodec())
                                    .addLast("aggregator", new HttpObjectAggregator(MAX_BODY_BYTES))
                                    .addLast("provider", new ProviderHandler(ProviderServer.this));
                        }
                    });
            this.serverChannel = bootstrap.bind(settings.listen().toSocketAddress()).sync().channel();
        } catch (InterruptedException | RuntimeException e) {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw e;
        }
    }

    /** Binds and starts serving; throws (with the OS's reason) when the address cannot be bound. */
    public static ProviderServer start(Settings settings) throws InterruptedException {
        return new ProviderServer(settings);
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    public Settings settings() {
        return settings;
    }

    private final Faults faults = new Faults();

    /** Injected faults (see {@link Faults}); all off by default. */
    public Faults faults() {
        return faults;
    }

    public ProviderStats stats() {
        return new ProviderStats(settings.name(), served.sum(), rejected.sum(), inFlight.get(), maxInFlight.get());
    }

    /** Completes when the server channel closes, i.e. after {@link #close()}. */
    public void awaitClose() throws InterruptedException {
        serverChannel.closeFuture().await();
    }

    @Override
    public void close() {
        serverChannel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Takes one slot if the limit allows; the caller then owes exactly one {@link #finished} or {@link #abandoned}. */
    boolean tryAdmit() {
        int now = inFlight.incrementAndGet();
        if (now > settings.maxConcurrency()) {
            inFlight.decrementAndGet();
            rejected.increment();
            return false;
        }
        maxInFlight.accumulateAndGet(now, Math::max);
        return true;
    }

    void finished() {
        inFlight.decrementAndGet();
        served.increment();
    }

    /** The client went away before its answer was due: free the slot without counting it as served. */
    void abandoned() {
        inFlight.decrementAndGet();
    }
}
