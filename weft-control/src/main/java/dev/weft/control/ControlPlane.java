package dev.weft.control;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import dev.weft.control.ca.AdminToken;
import dev.weft.control.ca.CertificateAuthority;
import dev.weft.control.history.History;
import dev.weft.control.history.HistoryScraper;
import dev.weft.control.diagnose.DiagnoseApi;
import dev.weft.control.diagnose.DiagnoseHttpHandler;
import dev.weft.control.trace.TraceApi;
import dev.weft.control.ui.UiApi;
import dev.weft.control.ui.UiHttpHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.flow.FlowControlHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The embedded registry server: Weft's control plane. Sidecars take leases, register endpoints under them and
 * watch services over a small HTTP/1.1 JSON API (see docs/registry.md); state survives restarts in the data dir.
 *
 * <pre>{@code
 * ControlPlane control = new ControlPlane();
 * InetSocketAddress bound = control.start(new InetSocketAddress("127.0.0.1", 0), Path.of(".weft/control"));
 * Registry registry = Registries.open("weft://127.0.0.1:" + bound.getPort());
 * ...
 * control.close();
 * }</pre>
 *
 * <p>With {@link #apiTls} on, the API serves TLS 1.3 with a certificate from the control plane's own CA
 * ({@link ApiTls}); otherwise plain HTTP. Every request passes {@link ApiGuard} first: writes need credentials (the operator token, a sidecar's join token
 * or a signature by its mesh certificate), and so do topology reads except from loopback with the embedded store
 * (docs/security.md).
 *
 * <p>Where registrations and policies live is the {@link ControlBackend}: the data dir by default (all registry state
 * on the single store thread of {@link RegistryStore}), or an external store such as etcd. Threading: two event-loop
 * threads ("weft-control-N") serve connections; collected spans live on the single "weft-control-spans" thread of
 * {@link TraceApi}; culprit finding ({@code GET /v1/diagnose}) runs on the single "weft-control-diagnose" thread of
 * {@link DiagnoseApi}; the dashboard's history reads the sidecars' /metrics on "weft-control-history"
 * ({@link HistoryScraper}) and is served under /ui/ and /v1/ui/ by {@link UiHttpHandler}. {@link #start} and
 * {@link #close} may be called from any thread.
 */
public final class ControlPlane implements AutoCloseable {
    /** How often a watch stream carries a heartbeat line, so clients can tell a quiet stream from a dead one. */
    public static final Duration DEFAULT_WATCH_HEARTBEAT = Duration.ofSeconds(2);
    private static final int MAX_REQUEST_BYTES = 64 * 1024;
    /** Spans kept for {@code ./weft trace} by default: about 1.3 KB of heap each (mostly span JSON), 65 MB in all. */
    public static final int DEFAULT_TRACE_STORE_SPANS = 50_000;

    private final Duration watchHeartbeat;
    private final int traceStoreSpans;
    private CertificateAuthority authority;
    /** The operator token; with the embedded store, DATA_DIR/admin.token unless set before start. */
    private AdminToken adminToken;
    private Duration historyInterval = HistoryScraper.DEFAULT_INTERVAL;
    /** {@code --api-tls}; in code the default is plain HTTP, the command's is {@code auto}. */
    private ApiTls.Mode tlsMode = ApiTls.Mode.OFF;
    private java.util.List<String> apiSans = java.util.List.of();
    /** The API's TLS, once started with it on; null for plain HTTP. */
    private ApiTls tls;
    private HistoryScraper history;
    private ControlBackend store;
    private TraceApi traces;
    /** Culprit finding over the span store ({@code GET /v1/diagnose}). */
    private DiagnoseApi diagnose;
    private EventLoopGroup group;
    private ChannelGroup channels;
    private Channel server;
    private InetSocketAddress bound;

    public ControlPlane() {
        this(DEFAULT_WATCH_HEARTBEAT);
    }

    public ControlPlane(Duration watchHeartbeat) {
        this(watchHeartbeat, DEFAULT_TRACE_STORE_SPANS);
    }

    /** @param traceStoreSpans spans kept in memory for trace queries; 0 collects none (the span API answers 404) */
    public ControlPlane(Duration watchHeartbeat, int traceStoreSpans) {
        if (traceStoreSpans < 0) {
            throw new IllegalArgumentException("trace store size must be >= 0, got " + traceStoreSpans);
        }
        this.traceStoreSpans = traceStoreSpans;
        this.watchHeartbeat = Objects.requireNonNull(watchHeartbeat, "watchHeartbeat");
        if (watchHeartbeat.toMillis() < 10) {
            throw new IllegalArgumentException("watch heartbeat too short: " + watchHeartbeat + " (expected >= 10ms)");
        }
    }

    /**
     * Makes this control plane the mesh's certificate authority (join tokens, certificates, trust bundle; see
     * docs/security.md). Call before {@link #start}; the control plane closes the CA in {@link #close}. Without one the
     * identity routes answer 404, as for an embedded control plane in a test that needs no certificates.
     */
    public synchronized ControlPlane authority(CertificateAuthority ca) {
        if (store != null) {
            throw new IllegalStateException("set the certificate authority before start()");
        }
        this.authority = Objects.requireNonNull(ca, "ca");
        return this;
    }

    /**
     * The operator token the API accepts ({@code --admin-token-file}; docs/security.md). Call before {@link #start}.
     * Without one, {@link #start(InetSocketAddress, Path)} reads or generates {@code DATA_DIR/admin.token}, and
     * {@link #start(InetSocketAddress, ControlBackend)} accepts no operator token at all (only sidecars' credentials).
     */
    public synchronized ControlPlane adminToken(AdminToken token) {
        if (store != null) {
            throw new IllegalStateException("set the operator token before start()");
        }
        this.adminToken = Objects.requireNonNull(token, "token");
        return this;
    }

    /** The operator token in force (its file, never the token), or null if none; set once started. */
    public synchronized AdminToken adminToken() {
        return adminToken;
    }

    /**
     * How often the dashboard's history reads every sidecar's /metrics (default 5 s, docs/observability.md); tests
     * shorten it, and zero reads none (the dashboard then has no charts). Call before {@link #start}.
     */
    public synchronized ControlPlane historyInterval(Duration every) {
        if (store != null) {
            throw new IllegalStateException("set the history interval before start()");
        }
        if (every.isNegative() || (!every.isZero() && every.toMillis() < 100)) {
            throw new IllegalArgumentException("history interval " + every.toMillis() + "ms out of range"
                    + " (expected 0 for none, or 100ms and more)");
        }
        this.historyInterval = every;
        return this;
    }

    /**
     * Whether the API serves TLS ({@code --api-tls}; docs/security.md): {@code on} needs {@link #authority}, whose CA
     * issues the serving certificate; {@code auto} is on unless the listen address is loopback. Without this call the
     * API is plain HTTP, as tests and the demo in code want it. Call before {@link #start}.
     *
     * @param sans extra names for the certificate ({@code --api-san}): DNS names or IP addresses
     */
    public synchronized ControlPlane apiTls(ApiTls.Mode mode, java.util.List<String> sans) {
        if (store != null) {
            throw new IllegalStateException("set the API's TLS before start()");
        }
        this.tlsMode = Objects.requireNonNull(mode, "mode");
        this.apiSans = java.util.List.copyOf(sans);
        return this;
    }

    /** The API's TLS (its certificate, its description) when started with it on, else null. */
    public synchronized ApiTls apiTls() {
        return tls;
    }

    /**
     * Restores state from {@code dataDir} (created if missing) and starts serving from it: the embedded backend.
     *
     * @param listen where to listen; port 0 picks a free port
     * @return the bound address, with the real port
     * @throws IOException if the data dir is unusable or locked by another control plane, or the address is taken
     */
    public synchronized InetSocketAddress start(InetSocketAddress listen, Path dataDir) throws IOException {
        Objects.requireNonNull(listen, "listen");
        Objects.requireNonNull(dataDir, "dataDir");
        if (store != null) {
            throw new IllegalStateException("control plane already started on " + bound);
        }
        if (adminToken == null) {
            adminToken = AdminToken.inDataDir(dataDir);
        }
        return start(listen, EmbeddedBackend.open(dataDir));
    }

    /**
     * Starts serving the API from {@code backend} (e.g. one opened with {@link ControlBackendProvider#open}). The
     * control plane owns the backend from here on: it closes it in {@link #close}, or at once if it cannot listen.
     * Spans stay in this process's memory whatever the backend.
     *
     * @throws IOException if the address is taken
     */
    public synchronized InetSocketAddress start(InetSocketAddress listen, ControlBackend backend) throws IOException {
        Objects.requireNonNull(listen, "listen");
        Objects.requireNonNull(backend, "backend");
        if (store != null) {
            backend.close();
            throw new IllegalStateException("control plane already started on " + bound);
        }
        ControlBackend opened = backend;
        CertificateAuthority ca = authority;
        ApiTls apiTls = null;
        if (tlsMode.tlsOn(listen)) {
            if (ca == null) {
                backend.close();
                throw new IllegalStateException("--api-tls " + tlsMode.name().toLowerCase(java.util.Locale.ROOT)
                        + " on " + listen + " needs the certificate authority (authority(ca) before start())");
            }
            try {
                apiTls = new ApiTls(ca, listen, apiSans);
            } catch (RuntimeException e) {
                backend.close();
                throw e;
            }
        }
        ApiTls serving = apiTls;
        TraceApi spans = traceStoreSpans > 0 ? new TraceApi(traceStoreSpans) : null;
        DiagnoseApi diagnose = new DiagnoseApi(spans, opened);
        HistoryScraper scraper = new HistoryScraper(opened, new History(), historyInterval);
        UiApi ui = new UiApi(scraper, opened);
        // Local mode (docs/security.md): the embedded store, so one machine's quick start reads without a token.
        ApiCallers callers = new ApiCallers(adminToken, ca, opened instanceof EmbeddedBackend,
                java.time.Clock.systemUTC());
        ApiGuard guard = new ApiGuard(callers);
        LeaseOwners leaseOwners = new LeaseOwners(opened, callers);
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, new DefaultThreadFactory("weft-control", true),
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        ChannelGroup open = new DefaultChannelGroup("weft-control-connections", GlobalEventExecutor.INSTANCE);
        Class<? extends ServerChannel> channelType = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(loops)
                .channel(channelType)
                // Lets a restarted control plane take its port back while old connections sit in TIME_WAIT.
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        open.add(ch);
                        if (serving != null) {
                            serving.addTo(ch);   // first: no byte reaches the HTTP codec before the handshake
                        }
                        ch.pipeline()
                                .addLast("http", new HttpServerCodec())
                                .addLast("body-limit", new BodyLimitSelector())
                                .addLast("aggregate", new HttpObjectAggregator(MAX_REQUEST_BYTES))
                                // Holds back requests that arrived in the same read while the handler has
                                // auto-read off, so a pipelining client gets its answers in order.
                                .addLast("one-at-a-time", new FlowControlHandler())
                                // Credentials first: no route handler sees a request its caller may not make.
                                .addLast("guard", guard)
                                .addLast("ui", new UiHttpHandler(ui))
                                .addLast("policies", new PolicyHttpHandler(opened))
                                .addLast("diagnose", new DiagnoseHttpHandler(diagnose))
                                .addLast("api", new ControlHttpHandler(opened, watchHeartbeat, spans, ca,
                                        () -> ui.metricsText() + callers.metricsText()
                                        + (serving == null ? "" : serving.metricsText()), leaseOwners));
                    }
                });
        ChannelFuture bind = bootstrap.bind(listen).awaitUninterruptibly();
        if (!bind.isSuccess()) {
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
            opened.close();
            diagnose.close();
            if (spans != null) {
                spans.close();
            }
            scraper.close();
            if (serving != null) {
                serving.close();
            }
            throw new IOException("cannot listen on " + listen.getHostString() + ":" + listen.getPort() + ": "
                    + bind.cause().getMessage(), bind.cause());
        }
        this.store = opened;
        this.traces = spans;
        this.diagnose = diagnose;
        this.history = scraper.start();
        this.tls = serving;
        this.group = loops;
        this.channels = open;
        this.server = bind.channel();
        this.bound = (InetSocketAddress) server.localAddress();
        return bound;
    }

    /**
     * Registry requests keep their 64 KiB limit; span batches (under {@code /api/}) may be larger. The aggregator is
     * swapped at the start of each request, when it holds nothing, only if the limit changes.
     *
     * <p>Thread: the connection's event loop. Buffers: passes every message on untouched.
     */
    private static final class BodyLimitSelector extends ChannelInboundHandlerAdapter {
        private int current = MAX_REQUEST_BYTES;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof HttpRequest req) {
                int limit = req.uri().startsWith(ControlHttpHandler.API_PREFIX) ? TraceApi.MAX_BODY_BYTES
                        : MAX_REQUEST_BYTES;
                if (limit != current) {
                    ctx.pipeline().replace("aggregate", "aggregate", new HttpObjectAggregator(limit));
                    current = limit;
                }
            }
            ctx.fireChannelRead(msg);
        }
    }

    /** The bound address, or null before {@link #start}. */
    public synchronized InetSocketAddress address() {
        return bound;
    }

    /**
     * Stops serving and releases the data dir. Connections (watch streams included) are closed, so clients see the
     * control plane go away and start reconnecting; all acknowledged changes are already on disk.
     */
    @Override
    public synchronized void close() {
        if (store == null) {
            return;
        }
        server.close().awaitUninterruptibly();
        channels.close().awaitUninterruptibly();
        history.close();
        // After the connections, so nothing queues new work on a closing store.
        store.close();
        diagnose.close();
        if (traces != null) {
            traces.close();
            traces = null;
        }
        if (tls != null) {
            tls.close();
            tls = null;
        }
        if (authority != null) {
            authority.close();
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        store = null;
        group = null;
        channels = null;
        server = null;
    }
}
