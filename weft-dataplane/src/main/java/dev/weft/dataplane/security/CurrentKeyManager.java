package dev.weft.dataplane.security;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.function.Supplier;

/**
 * Presents the sidecar's certificate in force at each handshake, so that a renewal reaches new connections without
 * rebuilding the TLS context, while connections already up keep the key they were made with.
 *
 * <p>The alias is the certificate's serial: BoringSSL asks for the alias first and for the chain and key after, and a
 * renewal may land in between; the two certificates handed out last are kept so that the pair asked for is the pair
 * given.
 *
 * <p>Thread: called on connections' event loops, once per handshake; the fields are volatile (a lost update between
 * two loops costs at worst one failed handshake at the moment of a renewal, which the dialling side retries).
 */
final class CurrentKeyManager extends X509ExtendedKeyManager {
    private final Supplier<WorkloadCertificate> current;
    /** The certificate last handed out, and the one before it: what a handshake begun before a renewal asks for. */
    private volatile WorkloadCertificate last;
    private volatile WorkloadCertificate older;

    CurrentKeyManager(Supplier<WorkloadCertificate> current) {
        this.current = current;
    }

    private String alias() {
        WorkloadCertificate c = current.get();
        if (c == null) {
            return null; // the handshake fails: MeshTls refuses TLS before it comes to that
        }
        WorkloadCertificate l = last;
        if (l != c) {
            older = l;
            last = c;
        }
        return c.serial();
    }

    private WorkloadCertificate byAlias(String alias) {
        WorkloadCertificate c = current.get();
        if (c != null && c.serial().equals(alias)) {
            return c;
        }
        for (WorkloadCertificate p : new WorkloadCertificate[] {last, older}) {
            if (p != null && p.serial().equals(alias)) {
                return p;
            }
        }
        return null;
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
        return alias();
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        return alias();
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        return alias();
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return alias();
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        String a = alias();
        return a == null ? null : new String[] {a};
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        return getClientAliases(keyType, issuers);
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        WorkloadCertificate c = byAlias(alias);
        return c == null ? null : c.chain().toArray(X509Certificate[]::new);
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        WorkloadCertificate c = byAlias(alias);
        return c == null ? null : c.key();
    }
}
