package dev.weft.dataplane.security;

/**
 * Who is at the other end of a mesh connection, as its verified certificate says: the SPIFFE ID in its one URI SAN
 * ({@code spiffe://<trust domain>/service/<name>}) and the service name in it. Known only on an mTLS connection; a
 * plaintext one has none (null), whatever its requests claim in {@code x-weft-caller}.
 */
public record PeerIdentity(String spiffeId, String service) {
}
