package dev.weft.control;

import dev.weft.control.ca.CertificateAuthority;
import dev.weft.registry.support.Durations;
import dev.weft.registry.tls.ControlTrust;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.ssl.SslProvider;

import javax.net.ssl.SSLException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The control plane's API over TLS ({@code --api-tls}, docs/security.md "The control plane's API over TLS"): a serving
 * certificate the control plane issues itself from its CA, for a key that stays in this object's memory, renewed when
 * a third of its life is left and swapped in for new connections (connections already open keep theirs).
 *
 * <p>TLS 1.3 only: every client (the sidecars' and the commands' JDK 25, browsers, curl, openssl) speaks it, so
 * nothing needs 1.2. A client that speaks plain HTTP to the port gets no answer: its connection is closed, counted
 * in {@code weft_control_api_tls_failures_total{reason="not-tls"}} and logged (at most one line per
 * {@link #LOG_EVERY}); any other failed handshake is counted under {@code reason="handshake"}.
 *
 * <p>Threads: renewals run on "weft-control-api-tls" (the signing itself on the CA's thread); {@link #addTo} and the
 * failure handler run on the connection's event loop. The current {@link SslContext} is a volatile reference.
 * Buffers: none held; {@code SslHandler} owns and releases the records it reads.
 */
public final class ApiTls implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ApiTls.class.getName());
    static final Duration LOG_EVERY = Duration.ofSeconds(10);
    static final Duration RETRY = Duration.ofSeconds(30);

    /** {@code --api-tls}: on, off, or on exactly when the listen address is not loopback. */
    public enum Mode {
        AUTO, ON, OFF;

        /** Whether the API serves TLS on {@code listen}: {@code auto} keeps loopback plain (the local default mode). */
        public boolean tlsOn(InetSocketAddress listen) {
            return this == ON || (this == AUTO && !loopback(listen));
        }

        public static Mode parse(String text) {
            for (Mode m : values()) {
                if (m.name().equalsIgnoreCase(text.strip())) {
                    return m;
                }
            }
            throw new IllegalArgumentException("invalid --api-tls '" + text + "' (expected auto, on or off)");
        }
    }

    static boolean loopback(InetSocketAddress listen) {
        return listen.getAddress() != null && listen.getAddress().isLoopbackAddress();
    }

    private final CertificateAuthority ca;
    private final Set<String> dnsNames;
    private final Set<InetAddress> addresses;
    private final ScheduledExecutorService renewer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "weft-control-api-tls");
        t.setDaemon(true);
        return t;
    });
    private volatile SslContext context;
    private volatile X509Certificate current;
    /** The pending renewal; guarded by this object's monitor ({@link #renew} holds it). */
    private java.util.concurrent.ScheduledFuture<?> pending;
    private final LongAdder notTls = new LongAdder();
    private final LongAdder handshakeFailures = new LongAdder();
    private final LongAdder renewals = new LongAdder();
    private final AtomicLong lastLogNanos = new AtomicLong(System.nanoTime() - LOG_EVERY.toNanos());

    /**
     * Issues the first certificate (blocking, a few milliseconds) and schedules its renewal.
     *
     * @param listen the address the API listens on: a SAN, with every address of this host when it is a wildcard
     * @param extra  {@code --api-san} values: DNS names or IP addresses
     * @throws IllegalArgumentException for an {@code --api-san} that is neither a DNS name nor an IP address
     */
    public ApiTls(CertificateAuthority ca, InetSocketAddress listen, List<String> extra) {
        this.ca = ca;
        Set<String> dns = new LinkedHashSet<>(List.of("localhost"));
        Set<InetAddress> ips = new LinkedHashSet<>();
        ips.add(InetAddress.getLoopbackAddress());
        addAddress(ips, "127.0.0.1");
        addAddress(ips, "::1");
        if (listen.getAddress() != null && listen.getAddress().isAnyLocalAddress()) {
            ips.addAll(hostAddresses());
        } else if (listen.getAddress() != null) {
            ips.add(listen.getAddress());
        }
        if (!listen.getHostString().isEmpty() && !isIpLiteral(listen.getHostString())) {
            dns.add(listen.getHostString());
        }
        try {
            dns.add(InetAddress.getLocalHost().getHostName());
        } catch (java.io.IOException | RuntimeException e) {
            // no resolvable host name: the addresses and --api-san still work
        }
        for (String san : extra) {
            String s = san.strip();
            if (isIpLiteral(s)) {
                addAddress(ips, s);
            } else if (s.matches("(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*")) {
                dns.add(s.toLowerCase(java.util.Locale.ROOT));
            } else {
                throw new IllegalArgumentException("invalid --api-san '" + san + "' (expected a DNS name such as"
                        + " control.example.com, or an IP address such as 10.0.0.5 or fd00::5)");
            }
        }
        this.dnsNames = Collections.unmodifiableSet(dns);
        this.addresses = Collections.unmodifiableSet(ips);
        renew();
    }

    /** Adds the TLS handler and its failure counter at the front of a new connection's pipeline. */
    void addTo(SocketChannel ch) {
        ch.pipeline().addFirst("tls-failures", failures).addFirst("tls", context.newHandler(ch.alloc()));
    }

    /** The certificate new connections get now. */
    public X509Certificate certificate() {
        return current;
    }

    /** DNS names and IP addresses the certificate carries. */
    public String describe() {
        X509Certificate c = current;
        List<String> ips = addresses.stream().map(InetAddress::getHostAddress).toList();
        return "API over " + ControlTrust.PROTOCOL + " with a certificate from the CA (names " + dnsNames + ", addresses "
                + ips + ", valid until " + c.getNotAfter().toInstant() + ", renewed when a third is left)";
    }

    /** Issues a new certificate for new connections, and schedules the next renewal. Package-private for tests. */
    synchronized void renew() {
        try {
            CertificateAuthority.Serving serving = ca.issueServing(dnsNames, addresses).get(10, TimeUnit.SECONDS);
            SslContext fresh = SslContextBuilder.forServer(serving.key(), serving.chain()).sslProvider(SslProvider.JDK)
                    .protocols(ControlTrust.PROTOCOL).build();
            boolean first = current == null;
            context = fresh;
            current = serving.leaf();
            if (!first) {
                renewals.increment();
                LOG.log(System.Logger.Level.INFO, "API serving certificate renewed, valid until {0}",
                        serving.leaf().getNotAfter().toInstant());
            }
            Instant from = serving.leaf().getNotBefore().toInstant();
            Duration life = Duration.between(from, serving.leaf().getNotAfter().toInstant());
            Duration left = Duration.between(Instant.now(), serving.leaf().getNotAfter().toInstant());
            Duration wait = left.minus(life.dividedBy(3));
            schedule(wait.isNegative() ? Duration.ZERO : wait);
        } catch (SSLException | java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            if (current == null) {
                throw new IllegalStateException("cannot make the API's serving certificate: " + e.getMessage(), e);
            }
            LOG.log(System.Logger.Level.WARNING, "API serving certificate not renewed ({0}); trying again in {1}",
                    e.getMessage(), Durations.format(RETRY));
            schedule(RETRY);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One renewal pending at a time: a renewal made early (a test's) replaces the one that was due. */
    private void schedule(Duration wait) {
        if (pending != null) {
            pending.cancel(false);
        }
        try {
            pending = renewer.schedule(this::renew, wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing
        }
    }

    String metricsText() {
        return "# HELP weft_control_api_tls_failures_total Connections to the API closed in the TLS handshake: plain"
                + " HTTP on the TLS port (not-tls), or any other failed handshake (handshake).\n"
                + "# TYPE weft_control_api_tls_failures_total counter\n"
                + "weft_control_api_tls_failures_total{reason=\"not-tls\"} " + notTls.sum() + "\n"
                + "weft_control_api_tls_failures_total{reason=\"handshake\"} " + handshakeFailures.sum() + "\n"
                + "# HELP weft_control_api_tls_renewals_total Serving certificates of the API renewed.\n"
                + "# TYPE weft_control_api_tls_renewals_total counter\n"
                + "weft_control_api_tls_renewals_total " + renewals.sum() + "\n"
                + "# HELP weft_control_api_tls_expiry_timestamp_seconds When the API's serving certificate expires.\n"
                + "# TYPE weft_control_api_tls_expiry_timestamp_seconds gauge\n"
                + "weft_control_api_tls_expiry_timestamp_seconds " + current.getNotAfter().toInstant().getEpochSecond()
                + "\n";
    }

    @Override
    public void close() {
        renewer.shutdownNow();
    }

    /** Counts and logs failed handshakes, and keeps their exceptions from reaching the route handlers. */
    private final ChannelHandler failures = new Failures();

    /** Thread: the connection's event loop. Buffers: none; passes every message on. Shared: no state of its own. */
    @ChannelHandler.Sharable
    private final class Failures extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof SslHandshakeCompletionEvent done && !done.isSuccess()) {
                boolean plain = done.cause() instanceof NotSslRecordException;
                (plain ? notTls : handshakeFailures).increment();
                long now = System.nanoTime();
                long last = lastLogNanos.get();
                if (now - last >= LOG_EVERY.toNanos() && lastLogNanos.compareAndSet(last, now)) {
                    LOG.log(System.Logger.Level.WARNING, plain
                            ? "closed a plain-HTTP connection from {0} to the TLS API (use https:// or weft+tls://);"
                            + " counted in weft_control_api_tls_failures_total, logged once per {1}"
                            : "TLS handshake with {0} failed: " + done.cause().getMessage() + "; counted in"
                            + " weft_control_api_tls_failures_total, logged once per {1}",
                            ctx.channel().remoteAddress(), Durations.format(LOG_EVERY));
                }
                ctx.close();
                return;
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof io.netty.handler.codec.DecoderException && cause.getCause() instanceof SSLException
                    || cause instanceof SSLException) {
                ctx.close();   // counted by the handshake event, or a broken record on an open connection
                return;
            }
            ctx.fireExceptionCaught(cause);
        }
    }

    private static boolean isIpLiteral(String s) {
        return s.matches("[0-9.]+") && s.chars().filter(c -> c == '.').count() == 3 || s.contains(":");
    }

    private static void addAddress(Set<InetAddress> ips, String literal) {
        try {
            ips.add(InetAddress.getByName(literal));   // a literal: no name lookup
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException("invalid IP address '" + literal + "'", e);
        }
    }

    /** Every address of this host's interfaces that are up, link-local ones left out: what clients dial. */
    private static Set<InetAddress> hostAddresses() {
        Set<InetAddress> out = new LinkedHashSet<>();
        try {
            for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (nif.isUp()) {
                    Collections.list(nif.getInetAddresses()).stream().filter(a -> !a.isLinkLocalAddress())
                            .forEach(out::add);
                }
            }
        } catch (SocketException e) {
            // the loopback addresses and --api-san still work
        }
        return out;
    }
}
