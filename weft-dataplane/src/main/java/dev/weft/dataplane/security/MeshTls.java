package dev.weft.dataplane.security;

import dev.weft.dataplane.metrics.PrometheusText;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;

import javax.net.ssl.SSLException;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * TLS on the mesh link (docs/security.md, "mTLS on the mesh link"): TLS 1.3 only, both sides present their workload
 * certificate, ALPN {@value #ALPN} names the WMP version spoken inside. Built once per sidecar from its
 * {@link SidecarIdentity}; the servers only ask it for a handler per connection ({@code inbound/InboundServer} when a
 * ClientHello arrives, {@code mesh/MeshPool} when it dials), so every TLS decision lives here.
 *
 * <p>The two contexts are BoringSSL's (netty-tcnative) and never rebuilt: their key manager and trust manager read the
 * certificate in force at each handshake ({@link CurrentKeyManager}, {@link PeerVerifier}), so a renewal or a root
 * added to the bundle reaches every new connection, and connections already up are left alone.
 *
 * <p>What each mode does here ({@code --mtls}): {@code strict} dials only TLS and refuses plaintext on the inbound
 * port; {@code permissive} dials TLS whenever it holds a certificate and accepts both (TLS only once it holds one);
 * {@code off} has no contexts at all.
 *
 * <p>Thread: built on the starting thread; afterwards called from every Worker loop. The contexts are thread-safe,
 * the counters are LongAdders.
 */
public final class MeshTls {
    private static final System.Logger LOG = System.getLogger(MeshTls.class.getName());
    /** The ALPN name of the protocol inside: WMP version 1 (docs/protocol.md). */
    public static final String ALPN = "weft-wmp/1";
    /** A handshake must finish within this, or the connection is closed and counted as a handshake failure. */
    public static final long HANDSHAKE_TIMEOUT_MILLIS = 5_000;
    private static final long LOG_EVERY_NANOS = 1_000_000_000L;

    private final MtlsMode mode;
    private final SidecarIdentity identity;
    private final SslContext server;
    private final SslContext client;
    /** [side][ok=0 | failed=1], side 0 = server (accepted), 1 = client (dialled). */
    private final LongAdder[][] handshakes = {{new LongAdder(), new LongAdder()}, {new LongAdder(), new LongAdder()}};
    private final LongAdder[][] refused = new LongAdder[2][TlsRefusal.values().length];
    /** When each reason was last logged (System.nanoTime), so that a scan of the port is counted, not a log flood. */
    private final AtomicLongArray lastLogged = new AtomicLongArray(TlsRefusal.values().length);

    /**
     * @param identity the sidecar's certificate over time; null without one ({@code --mtls off}, or permissive with
     *                 no {@code --token-file}): then everything is plaintext
     */
    public MeshTls(MtlsMode mode, SidecarIdentity identity) {
        this.mode = mode;
        this.identity = mode == MtlsMode.OFF ? null : identity;
        for (LongAdder[] side : refused) {
            for (int i = 0; i < side.length; i++) {
                side[i] = new LongAdder();
            }
        }
        if (this.identity == null) {
            server = null;
            client = null;
            if (mode == MtlsMode.OFF) {
                LOG.log(System.Logger.Level.WARNING, "weft: --mtls off: the mesh link is PLAINTEXT and"
                        + " UNAUTHENTICATED in both directions; anyone who reaches the inbound port is trusted and"
                        + " x-weft-caller is taken as claimed. For benchmarks only.");
            }
            return;
        }
        PeerVerifier verifier = new PeerVerifier(this.identity::current, this::refused);
        CurrentKeyManager keys = new CurrentKeyManager(this.identity::current);
        ApplicationProtocolConfig alpn = new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                // OpenSSL's only behaviours: say nothing when no protocol matches, then refuse it ourselves (below)
                // with a reason and a count instead of an alert the peer cannot explain.
                ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT, ALPN);
        try {
            server = SslContextBuilder.forServer(keys).sslProvider(SslProvider.OPENSSL).protocols("TLSv1.3")
                    .clientAuth(ClientAuth.REQUIRE).trustManager(verifier).applicationProtocolConfig(alpn).build();
            // No host name check: peers are dialled by address and identified by their SPIFFE ID instead.
            client = SslContextBuilder.forClient().sslProvider(SslProvider.OPENSSL).protocols("TLSv1.3")
                    .keyManager(keys).trustManager(verifier).applicationProtocolConfig(alpn)
                    .endpointIdentificationAlgorithm(null).build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot build the mesh TLS contexts (BoringSSL through netty-tcnative): "
                    + e.getMessage(), e);
        }
    }

    public MtlsMode mode() {
        return mode;
    }

    /** Whether the inbound port takes plaintext WMP and HTTP/1.1 (all modes but strict). */
    public boolean plaintextAccepted() {
        return mode != MtlsMode.STRICT;
    }

    /** Whether this sidecar holds a certificate now: it then dials TLS and accepts it. */
    public boolean active() {
        return identity != null && identity.current() != null;
    }

    /**
     * The dialling side's TLS handler for a new mesh connection, or null to dial plaintext (no certificate). Call on
     * the connection's loop; the handshake is counted when it ends.
     */
    public SslHandler clientHandler(ByteBufAllocator alloc) {
        return active() ? handler(client.newHandler(alloc), false) : null;
    }

    /** The accepting side's TLS handler, or null when this sidecar holds no certificate (the caller refuses). */
    public SslHandler serverHandler(ByteBufAllocator alloc) {
        return active() ? handler(server.newHandler(alloc), true) : null;
    }

    private SslHandler handler(SslHandler h, boolean isServer) {
        h.setHandshakeTimeoutMillis(HANDSHAKE_TIMEOUT_MILLIS);
        h.handshakeFuture().addListener(f -> {
            handshakes[isServer ? 0 : 1][f.isSuccess() ? 0 : 1].increment();
            if (!f.isSuccess() && !rejectedByVerifier(f.cause())) {
                // The verifier counted its own refusals; the rest (no certificate, no common version, a timeout)
                // are counted here.
                refused(isServer, classify(f.cause()), String.valueOf(f.cause().getMessage()));
            }
        });
        return h;
    }

    private static boolean rejectedByVerifier(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof TlsRefusal.PeerRejected) {
                return true;
            }
        }
        return false;
    }

    private static TlsRefusal classify(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            String m = String.valueOf(c.getMessage());
            if (m.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE") || m.contains("CERTIFICATE_REQUIRED")) {
                return TlsRefusal.NO_CERTIFICATE;
            }
        }
        return TlsRefusal.HANDSHAKE;
    }

    /**
     * After a successful handshake: the peer's verified identity, or null (counted, logged) when it did not agree on
     * {@value #ALPN} or its certificate cannot be read. The caller closes the connection on null.
     */
    public PeerIdentity verified(SslHandler h, boolean isServer, String peer) {
        String protocol = h.applicationProtocol();
        if (!ALPN.equals(protocol)) {
            refused(isServer, TlsRefusal.ALPN, "peer " + peer + " speaks " + (protocol == null ? "no ALPN protocol"
                    : "ALPN '" + protocol + "'") + ", this sidecar only " + ALPN);
            return null;
        }
        try {
            Certificate[] chain = h.engine().getSession().getPeerCertificates();
            WorkloadCertificate ours = identity.current();
            return PeerVerifier.identityOf((X509Certificate) chain[0], PeerVerifier.trustDomain(ours.spiffeId()));
        } catch (TlsRefusal.PeerRejected e) {
            refused(isServer, e.reason, "peer " + peer + ": " + e.getMessage());
            return null;
        } catch (CertificateException | javax.net.ssl.SSLPeerUnverifiedException | RuntimeException e) {
            refused(isServer, TlsRefusal.HANDSHAKE, "peer " + peer + ": unreadable certificate: " + e);
            return null;
        }
    }

    /**
     * The dialling side after a successful handshake: the peer's service when it agreed on {@value #ALPN} and its
     * certificate names {@code expected} (the service registered at the address dialled), else null (counted,
     * logged; the caller closes). Without this, any member of the mesh could answer for any service whose address
     * it holds.
     */
    public String verifiedAs(SslHandler h, String expected, String peer) {
        PeerIdentity id = verified(h, false, peer);
        if (id == null) {
            return null;
        }
        if (!id.service().equals(expected)) {
            refused(false, TlsRefusal.WRONG_SERVICE, "peer " + peer + " is registered for service '" + expected
                    + "' but its certificate names " + id.spiffeId());
            return null;
        }
        return id.service();
    }

    /** Counts a refused connection and logs why, at most once a second per reason. */
    public void refused(boolean isServer, TlsRefusal reason, String detail) {
        refused[isServer ? 0 : 1][reason.ordinal()].increment();
        long now = System.nanoTime();
        long last = lastLogged.get(reason.ordinal());
        if ((last == 0 || now - last >= LOG_EVERY_NANOS) && lastLogged.compareAndSet(reason.ordinal(), last, now)) {
            LOG.log(System.Logger.Level.WARNING, "weft: mesh TLS: refused " + (isServer ? "an inbound" : "an outbound")
                    + " connection (" + reason.label() + "): " + detail + " (counted in weft_tls_refused_total;"
                    + " logged at most once a second per reason)");
        }
    }

    /** Handshakes so far, for tests and /metrics. */
    public long handshakes(boolean isServer, boolean ok) {
        return handshakes[isServer ? 0 : 1][ok ? 0 : 1].sum();
    }

    public long refusals(boolean isServer, TlsRefusal reason) {
        return refused[isServer ? 0 : 1][reason.ordinal()].sum();
    }

    /** Prometheus text for /metrics: handshakes by side and result, refusals by side and reason. */
    public String metrics() {
        PrometheusText p = new PrometheusText();
        String help = "TLS handshakes on the mesh link; at steady load this stays flat (one per pooled connection).";
        for (int side = 0; side < 2; side++) {
            for (int ok = 0; ok < 2; ok++) {
                p.counter("weft_tls_handshakes_total", help, handshakes[side][ok].sum(), "side",
                        side == 0 ? "server" : "client", "result", ok == 0 ? "ok" : "failed");
            }
        }
        for (int side = 0; side < 2; side++) {
            for (TlsRefusal r : TlsRefusal.values()) {
                p.counter("weft_tls_refused_total", "Mesh connections refused at the TLS layer, by side and reason.",
                        refused[side][r.ordinal()].sum(), "side", side == 0 ? "server" : "client", "reason", r.label());
            }
        }
        return p.toString();
    }
}
