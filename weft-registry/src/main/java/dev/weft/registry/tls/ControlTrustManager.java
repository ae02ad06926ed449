package dev.weft.registry.tls;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import java.net.Socket;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.StringJoiner;

/**
 * Checks the control plane's chain (see {@link ControlTrust}): picks the trust anchors (the configured bundle, the
 * adopted roots, and the CA certificate of the presented chain that matches the pin), then lets the JDK's PKIX trust
 * manager verify the chain against exactly those, host name included (it reads the endpoint identification algorithm
 * from the engine, which {@code SmallHttpClient} and the JDK's HttpClient both set to HTTPS). Its failures are
 * rewritten into messages that name the flag to fix; the JDK puts them in the {@code SSLHandshakeException} the
 * client sees.
 *
 * <p>Thread: any (handshakes run on clients' event loops); the adopted roots are a volatile immutable list.
 */
final class ControlTrustManager extends X509ExtendedTrustManager {
    private static final String ADVICE = "pass --control-ca FILE (the control plane's /v1/trust-bundle, or its"
            + " DATA_DIR/ca/root.pem) or --control-ca-pin sha256:... (printed by ./weft token create)";

    private final List<X509Certificate> bundle;
    private final Path bundleFile;
    private final SpkiPin pin;
    /** The PKIX check over the configured bundle alone, made once; null without a bundle. */
    private final X509ExtendedTrustManager bundleCheck;
    private volatile List<X509Certificate> adopted = List.of();

    ControlTrustManager(List<X509Certificate> bundle, Path bundleFile, SpkiPin pin) {
        this.bundle = bundle;
        this.bundleFile = bundleFile;
        this.pin = pin;
        this.bundleCheck = bundle.isEmpty() ? null : pkix(bundle);
    }

    void adopt(List<X509Certificate> roots) {
        adopted = List.copyOf(roots);
    }

    String describe() {
        StringJoiner j = new StringJoiner(" and ");
        if (bundleFile != null) {
            j.add("the CAs of --control-ca " + bundleFile);
        }
        if (pin != null) {
            j.add("the CA pinned by --control-ca-pin " + pin);
        }
        if (!adopted.isEmpty()) {
            j.add(adopted.size() + " root(s) of the control plane's trust bundle");
        }
        return j.length() == 0 ? "the JDK's default trust store" : j.toString();
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        check(chain, authType, engine, null);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        check(chain, authType, null, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        check(chain, authType, null, null);
    }

    private void check(X509Certificate[] chain, String authType, SSLEngine engine, Socket socket)
            throws CertificateException {
        if (chain == null || chain.length == 0) {
            throw new CertificateException("the control plane sent no certificate");
        }
        List<X509Certificate> anchors = new ArrayList<>(bundle);
        anchors.addAll(adopted);
        X509Certificate pinned = pinnedIn(chain);
        if (pinned != null) {
            anchors.add(pinned);
        }
        if (anchors.isEmpty()) {
            if (pin != null) {
                throw new CertificateException("the control plane's CA does not match --control-ca-pin " + pin
                        + " (got " + presented(chain) + ")");
            }
            try {
                call(pkix(null), chain, authType, engine, socket);   // the JDK's default trust store
                return;
            } catch (CertificateException e) {
                throw new CertificateException("the control plane's certificate is not signed by a CA this client"
                        + " trusts (" + e.getMessage() + "): " + ADVICE, e);
            }
        }
        X509ExtendedTrustManager pkix = pinned == null && adopted.isEmpty() ? bundleCheck : pkix(anchors);
        try {
            call(pkix, chain, authType, engine, socket);
        } catch (CertificateException e) {
            String why = pin != null && pinned == null
                    ? "the control plane's CA does not match --control-ca-pin " + pin + " (got " + presented(chain)
                    + ")" + (anchors.isEmpty() ? "" : ", nor does its chain verify against " + describe())
                    : "the control plane's certificate does not verify against " + describe();
            throw new CertificateException(why + ": " + e.getMessage(), e);
        }
    }

    /** The CA certificate of the chain (never the leaf) whose key the pin names, or null. */
    private X509Certificate pinnedIn(X509Certificate[] chain) {
        if (pin == null) {
            return null;
        }
        for (int i = 1; i < chain.length; i++) {
            if (chain[i].getBasicConstraints() >= 0 && pin.matches(chain[i])) {
                return chain[i];
            }
        }
        return null;
    }

    /** The pins of the CA certificates the server sent, for the message of a mismatch. */
    private static String presented(X509Certificate[] chain) {
        Set<String> pins = new LinkedHashSet<>();
        for (int i = 1; i < chain.length; i++) {
            if (chain[i].getBasicConstraints() >= 0) {
                pins.add(SpkiPin.of(chain[i]).toString());
            }
        }
        return pins.isEmpty() ? "no CA certificate in the chain, only " + chain[0].getSubjectX500Principal()
                : String.join(", ", pins);
    }

    private static void call(X509ExtendedTrustManager pkix, X509Certificate[] chain, String authType,
                             SSLEngine engine, Socket socket) throws CertificateException {
        if (engine != null) {
            pkix.checkServerTrusted(chain, authType, engine);
        } else if (socket != null) {
            pkix.checkServerTrusted(chain, authType, socket);
        } else {
            pkix.checkServerTrusted(chain, authType);
        }
    }

    /** The JDK's PKIX trust manager over {@code anchors}; null: the JDK's default trust store. */
    private static X509ExtendedTrustManager pkix(List<X509Certificate> anchors) {
        try {
            KeyStore store = null;
            if (anchors != null) {
                store = KeyStore.getInstance(KeyStore.getDefaultType());
                store.load(null, null);
                for (int i = 0; i < anchors.size(); i++) {
                    store.setCertificateEntry("ca-" + i, anchors.get(i));
                }
            }
            TrustManagerFactory factory = TrustManagerFactory.getInstance("PKIX");
            factory.init(store);
            for (TrustManager m : factory.getTrustManagers()) {
                if (m instanceof X509ExtendedTrustManager x) {
                    return x;
                }
            }
            throw new IllegalStateException("the JDK's PKIX trust manager factory made no X509ExtendedTrustManager");
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new IllegalStateException("cannot make a PKIX trust manager: " + e.getMessage(), e);
        }
    }

    // --- a client never checks client certificates ---

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        throw new CertificateException("a control plane client does not authenticate TLS clients");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        throw new CertificateException("a control plane client does not authenticate TLS clients");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        throw new CertificateException("a control plane client does not authenticate TLS clients");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
    }
}
