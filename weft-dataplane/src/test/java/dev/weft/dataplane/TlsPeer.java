package dev.weft.dataplane;

import dev.weft.protocol.WmpCodecMetrics;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpFrameDecoder;
import dev.weft.protocol.WmpFrameEncoder;
import dev.weft.protocol.WmpLimits;
import dev.weft.protocol.WmpResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * A mesh peer made by a test, not by Weft: the JDK's TLS 1.3 client (not BoringSSL, so both stacks are exercised)
 * with a certificate the test chose (or none), trusting the mesh's roots, offering ALPN {@code weft-wmp/1}, and
 * speaking WMP through the production codec in EmbeddedChannels as {@code WmpBoundarySocketTest}'s peer does.
 *
 * <p>Thread: the test's. Buffers: frames read are released before they are returned (tests read fields only); a
 * response's body is copied out first into {@link #lastBody}.
 */
final class TlsPeer implements AutoCloseable {
    final SSLSocket socket;
    private final InputStream in;
    private final EmbeddedChannel encoder = new EmbeddedChannel(new WmpFrameEncoder(new WmpCodecMetrics()));
    private final EmbeddedChannel decoder = new EmbeddedChannel(new WmpFrameDecoder(WmpLimits.defaults(),
            new WmpCodecMetrics()));
    String lastBody = "";
    /** Writing failed: the server had already closed the connection. */
    private boolean refusedOnWrite;

    /**
     * Connects and finishes the TLS handshake as far as the client sees it (in TLS 1.3 the server judges the client's
     * certificate after that: a refusal shows on the first read).
     *
     * @param key   null for no client certificate
     * @param alpn  the protocols offered, none when empty
     */
    TlsPeer(int port, PrivateKey key, List<X509Certificate> chain, List<X509Certificate> roots, String... alpn)
            throws Exception {
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        if (key != null) {
            keys.setKeyEntry("peer", key, "t".toCharArray(), chain.toArray(X509Certificate[]::new));
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, "t".toCharArray());
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        for (int i = 0; i < roots.size(); i++) {
            trust.setCertificateEntry("root" + i, roots.get(i));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLSv1.3");
        ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        socket = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port);
        socket.setSoTimeout(5_000);
        SSLParameters params = socket.getSSLParameters();
        params.setProtocols(new String[] {"TLSv1.3"});
        params.setApplicationProtocols(alpn);
        socket.setSSLParameters(params);
        socket.startHandshake();
        in = socket.getInputStream();
    }

    /** The server's leaf, as this client verified it against the roots. */
    X509Certificate serverLeaf() throws Exception {
        return (X509Certificate) socket.getSession().getPeerCertificates()[0];
    }

    /**
     * Writes a frame. A server that refused this client may have closed before it is written (a broken pipe, an
     * alert): that is not an error here, the next {@link #read} returns null.
     */
    void send(WmpFrame frame) throws IOException {
        encoder.writeOutbound(frame);
        for (ByteBuf b; (b = encoder.readOutbound()) != null; ) {
            try {
                byte[] bytes = new byte[b.readableBytes()];
                b.readBytes(bytes);
                socket.getOutputStream().write(bytes);
                socket.getOutputStream().flush();
            } catch (javax.net.ssl.SSLException | java.net.SocketException e) {
                refusedOnWrite = true;
            } finally {
                b.release();
            }
        }
    }

    /** The next frame (released), or null when the connection ended: by a close, an alert or a reset. */
    WmpFrame read() throws IOException {
        byte[] buf = new byte[8192];
        if (refusedOnWrite) {
            return null;
        }
        while (true) {
            WmpFrame f = decoder.readInbound();
            if (f != null) {
                if (f instanceof WmpResponse r) {
                    lastBody += r.body().toString(StandardCharsets.UTF_8);
                } else if (f instanceof WmpData d) {
                    lastBody += d.body().toString(StandardCharsets.UTF_8);
                }
                f.release();
                return f;
            }
            int n;
            try {
                n = in.read(buf);
            } catch (javax.net.ssl.SSLException | java.net.SocketException e) {
                return null; // the server's alert or its close: the connection is refused
            }
            if (n < 0) {
                return null;
            }
            decoder.writeInbound(Unpooled.copiedBuffer(buf, 0, n));
        }
    }

    /** Reads until stream {@code id}'s answer ends; returns its status, or 0 when the connection ended first. */
    int status(int id) throws IOException {
        int status = 0;
        for (WmpFrame f; (f = read()) != null; ) {
            if (f instanceof WmpResponse r && r.streamId() == id) {
                status = r.status();
                if (r.endStream()) {
                    return status;
                }
            } else if (f instanceof WmpData d && d.streamId() == id && d.endStream()) {
                return status;
            }
        }
        return 0;
    }

    @Override
    public void close() throws IOException {
        socket.close();
        encoder.finishAndReleaseAll();
        decoder.finishAndReleaseAll();
    }
}
