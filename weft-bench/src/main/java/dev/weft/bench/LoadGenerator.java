package dev.weft.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.GlobalEventExecutor;
import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A closed-loop HTTP load generator in the manner of wrk: N keep-alive connections, each sending its next request
 * as soon as the previous answer arrives, for a fixed time after an optional warm-up that is not recorded.
 *
 * <p>Every answer is verified against the benchmark's contract ({@code 200} and body
 * {@code String.valueOf(data.hashCode())}) and every failure is counted by kind (see {@link ErrorCounts}).
 * Latency is the time from writing a request to reading its whole answer; as in wrk, a closed loop measures
 * service time and does not correct for coordinated omission.
 *
 * <p>Threads: connections run on a Netty event loop group of {@code threads} loops; the calling thread only
 * sleeps, prints progress and switches phases.
 */
public final class LoadGenerator {
    /**
     * @param url          the target; every request is {@code POST} to its path
     * @param connections  concurrent connections, each with one request in flight
     * @param duration     the measured time
     * @param warmup       time before the measurement whose outcomes are not recorded (zero for none)
     * @param timeout      a request without an answer after this long counts as a timeout and its connection is
     *                     reopened
     * @param threads      event loops driving the connections
     * @param serviceDelay the target's per-request delay, only to report the ceiling {@code connections / delay};
     *                     zero when unknown
     * @param progress     where the once-a-second progress line goes; null for silence
     */
    public record Settings(URI url, int connections, Duration duration, Duration warmup, Duration timeout,
                           int threads, Duration serviceDelay, PrintStream progress) {
        public Settings {
            Objects.requireNonNull(url, "url");
            if (!"http".equalsIgnoreCase(url.getScheme()) || url.getHost() == null) {
                throw new IllegalArgumentException("unsupported URL '" + url + "' (expected http://HOST:PORT/PATH)");
            }
            if (connections < 1) {
                throw new IllegalArgumentException("connections must be at least 1 (got " + connections + ")");
            }
            requirePositive("duration", duration);
            requirePositive("timeout", timeout);
            if (warmup == null || warmup.isNegative()) {
                throw new IllegalArgumentException("warm-up must be zero or more (got " + warmup + ")");
            }
            if (threads < 1) {
                throw new IllegalArgumentException("threads must be at least 1 (got " + threads + ")");
            }
            if (serviceDelay == null || serviceDelay.isNegative()) {
                throw new IllegalArgumentException("service delay must be zero or more (got " + serviceDelay + ")");
            }
        }

        private static void requirePositive(String what, Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive (got " + d + ")");
            }
        }

        /** 128 connections for 30 s, no warm-up, 5 s timeout, one thread per CPU, a 50 ms service, progress on stderr. */
        public static Settings of(URI url) {
            return new Settings(url, 128, Duration.ofSeconds(30), Duration.ZERO, Duration.ofSeconds(5),
                    Runtime.getRuntime().availableProcessors(), Duration.ofMillis(50), System.err);
        }

        public Settings withConnections(int n) {
            return new Settings(url, n, duration, warmup, timeout, threads, serviceDelay, progress);
        }

        public Settings withDuration(Duration d) {
            return new Settings(url, connections, d, warmup, timeout, threads, serviceDelay, progress);
        }

        public Settings withWarmup(Duration d) {
            return new Settings(url, connections, duration, d, timeout, threads, serviceDelay, progress);
        }

        public Settings withTimeout(Duration d) {
            return new Settings(url, connections, duration, warmup, d, threads, serviceDelay, progress);
        }

        public Settings withThreads(int n) {
            return new Settings(url, connections, duration, warmup, timeout, n, serviceDelay, progress);
        }

        public Settings withServiceDelay(Duration d) {
            return new Settings(url, connections, duration, warmup, timeout, threads, d, progress);
        }

        public Settings withProgress(PrintStream out) {
            return new Settings(url, connections, duration, warmup, timeout, threads, serviceDelay, out);
        }
    }

    /** Hooks around the measured window, called on the thread that called {@code run}. */
    public interface PhaseListener {
        /** Just before outcomes start to count (after the warm-up), e.g. to snapshot the targets' counters. */
        default void measurementStarting() {}

        /** Just after the last counted outcome. */
        default void measurementEnded() {}

        /** Once a second (warm-up included), what the second before it saw: a time line for fault scenarios. */
        default void second(Tick tick) {}

        /**
         * Asked after each second of the warm-up: true ends the warm-up there, and the measurement starts on the same
         * connections (the demo's "until stable"). The warm-up's length is then a cap.
         */
        default boolean warmedUp() {
            return false;
        }
    }

    /**
     * One second of a run, warm-up included.
     *
     * @param endNanos   {@code System.nanoTime()} at the end of the interval
     * @param seconds    the interval's length
     * @param ok         verified answers in it
     * @param errors     failures of any kind in it
     * @param p50Millis  median latency of its successes (0 when none)
     * @param p99Millis  99th percentile latency of its successes (0 when none)
     * @param latencyMicros its successes' latencies, to merge seconds into longer windows
     */
    public record Tick(long endNanos, double seconds, long ok, long errors, double p50Millis, double p99Millis,
                       Histogram latencyMicros) {}

    private static final Duration RECONNECT_BACKOFF = Duration.ofMillis(100);

    private LoadGenerator() {}

    public static LoadResult run(Settings settings) throws InterruptedException {
        return run(settings, new PhaseListener() {});
    }

    public static LoadResult run(Settings settings, PhaseListener listener) throws InterruptedException {
        Run run = new Run(settings);
        try {
            return run.execute(listener);
        } finally {
            run.stop();
        }
    }

    /** One run's shared state: what every {@link LoadConnection} reads and writes. Thread-safe. */
    static final class Run {
        private final Settings settings;
        private final LoadStats stats = new LoadStats();
        private final EventLoopGroup group;
        private final Bootstrap bootstrap;
        private final ChannelGroup channels = new DefaultChannelGroup("load", GlobalEventExecutor.INSTANCE);
        private final InetSocketAddress address;
        private final String path;
        private final String hostHeader;
        private volatile boolean running = true;

        Run(Settings settings) {
            this.settings = settings;
            URI url = settings.url();
            int port = url.getPort() < 0 ? 80 : url.getPort();
            this.address = new InetSocketAddress(url.getHost(), port);
            String rawPath = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
            this.path = url.getRawQuery() == null ? rawPath : rawPath + "?" + url.getRawQuery();
            this.hostHeader = url.getHost() + ":" + port;
            this.group = NettyTransport.newGroup(settings.threads(), "load");
            this.bootstrap = new Bootstrap()
                    .group(group)
                    .channel(NettyTransport.channelClass())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
                            (int) Math.min(Integer.MAX_VALUE, settings.timeout().toMillis()))
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline()
                                    .addLast("http", new HttpClientCodec())
                                    .addLast("aggregator", new HttpObjectAggregator(1 << 20))
                                    .addLast("load", new LoadConnection(Run.this));
                        }
                    });
        }

        boolean running() {
            return running;
        }

        LoadStats stats() {
            return stats;
        }

        String path() {
            return path;
        }

        String hostHeader() {
            return hostHeader;
        }

        Duration timeout() {
            return settings.timeout();
        }

        void connect() {
            if (!running) {
                return;
            }
            ChannelFuture future = bootstrap.connect(address);
            channels.add(future.channel());
            future.addListener(f -> {
                if (!f.isSuccess()) {
                    stats.connectionError();
                    reconnect(true);
                }
            });
        }

        /** Replaces a closed connection, so the number of connections stays what was asked for. */
        void reconnect(boolean afterFailure) {
            if (!running) {
                return;
            }
            try {
                if (afterFailure) {
                    group.next().schedule(this::connect, RECONNECT_BACKOFF.toMillis(), TimeUnit.MILLISECONDS);
                } else {
                    group.next().execute(this::connect);
                }
            } catch (RejectedExecutionException stopping) {
                // The run ended between the check and the schedule; nothing to replace.
            }
        }

        LoadResult execute(PhaseListener listener) throws InterruptedException {
            long start = System.nanoTime();
            for (int i = 0; i < settings.connections(); i++) {
                connect();
            }
            if (!settings.warmup().isZero()) {
                waitShowingProgress("warm-up", start, start + settings.warmup().toNanos(), listener);
            }
            long warmedUp = System.nanoTime() - start;

            listener.measurementStarting();
            long cpuBefore = processCpuNanos();
            long measureStart = System.nanoTime();
            stats.measuring = true;
            waitShowingProgress("measuring", start, measureStart + settings.duration().toNanos(), listener);
            stats.measuring = false;
            running = false;
            long measureEnd = System.nanoTime();
            long cpuAfter = processCpuNanos();
            awaitEventLoopsIdle();
            listener.measurementEnded();

            Duration measured = Duration.ofNanos(measureEnd - measureStart);
            Histogram histogram = stats.latencyHistogram();
            long successes = stats.successes();
            ErrorCounts errors = stats.errors();
            double seconds = measured.toNanos() / 1e9;
            Duration delay = settings.serviceDelay();
            double ceiling = delay.isZero() ? Double.NaN : settings.connections() / (delay.toNanos() / 1e9);
            return new LoadResult(settings.url(), settings.connections(), settings.threads(),
                    settings.warmup().isZero() ? Duration.ZERO : Duration.ofMillis(Math.round(warmedUp / 1e6)),
                    measured, successes + errors.total(), successes, errors, successes / seconds,
                    latencyOf(histogram), ceiling, delay, Duration.ofNanos(Math.max(0, cpuAfter - cpuBefore)));
        }

        /**
         * Each loop runs its tasks in order, so once an empty task has run on every loop, no handler that saw
         * {@code measuring == true} is still counting: the counters and the histogram agree.
         */
        private void awaitEventLoopsIdle() throws InterruptedException {
            for (EventExecutor loop : group) {
                loop.submit(() -> { }).await(5, TimeUnit.SECONDS);
            }
        }

        private void waitShowingProgress(String phase, long runStart, long until, PhaseListener listener)
                throws InterruptedException {
            PrintStream out = settings.progress();
            long lastOk = stats.progressSuccesses.sum();
            long lastErrors = stats.progressErrors.sum();
            long lastTick = System.nanoTime();
            while (true) {
                long now = System.nanoTime();
                if (now >= until) {
                    return;
                }
                long sinceStart = now - runStart;
                long nextSecond = runStart + (sinceStart / 1_000_000_000L + 1) * 1_000_000_000L;
                TimeUnit.NANOSECONDS.sleep(Math.min(nextSecond, until) - now);
                long tick = System.nanoTime();
                // A phase rarely ends on a whole second; report its last fraction only if it is not a mere sliver.
                boolean sliver = tick >= until && tick - lastTick < 250_000_000L;
                if (!sliver) {
                    long ok = stats.progressSuccesses.sum();
                    long errs = stats.progressErrors.sum();
                    double seconds = Math.max(1e-9, (tick - lastTick) / 1e9);
                    Histogram h = stats.progressLatency.getIntervalHistogram();
                    boolean any = h.getTotalCount() > 0;
                    listener.second(new Tick(tick, seconds, ok - lastOk, errs - lastErrors,
                            any ? h.getValueAtPercentile(50) / 1e3 : 0, any ? h.getValueAtPercentile(99) / 1e3 : 0, h));
                    if (out != null) {
                        String kinds = stats.takeProgressKinds();
                        out.printf(Locale.ROOT, "load %4ds  %-9s  qps %8.1f  errors/s %6.1f  (measured: %d ok, %d errors)%s%n",
                                Math.round((tick - runStart) / 1e9), phase, (ok - lastOk) / seconds,
                                (errs - lastErrors) / seconds, stats.successes(), stats.measuredErrors(),
                                kinds.isEmpty() ? "" : "  this second: " + kinds);
                    }
                    lastOk = ok;
                    lastErrors = errs;
                    lastTick = tick;
                    if (!stats.measuring && listener.warmedUp()) {
                        return;
                    }
                }
            }
        }

        void stop() {
            running = false;
            channels.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }

        private static LoadResult.Latency latencyOf(Histogram h) {
            if (h.getTotalCount() == 0) {
                return new LoadResult.Latency(0, 0, 0, 0, 0);
            }
            return new LoadResult.Latency(h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(90) / 1e3,
                    h.getValueAtPercentile(99) / 1e3, h.getMaxValue() / 1e3, h.getTotalCount());
        }
    }

    /** CPU time of this whole process so far: the generator is the process in {@code weft load} and {@code weft demo}. */
    static long processCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            long nanos = os.getProcessCpuTime();
            if (nanos >= 0) {
                return nanos;
            }
        }
        return ProcessHandle.current().info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
    }
}
