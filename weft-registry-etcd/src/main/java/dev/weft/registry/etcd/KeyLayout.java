package dev.weft.registry.etcd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.weft.registry.Endpoint;
import io.etcd.jetcd.ByteSequence;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Where Weft keeps its data in etcd, and how a value reads. This layout is public (docs/operations.md): operators read
 * it with {@code etcdctl get --prefix /weft/}, and other tools may write policies beside it.
 *
 * <pre>
 *   ROOT/v1/services/SERVICE/INSTANCE-ID   endpoint JSON, bound to the lease of the instance's sidecar
 *   ROOT/v1/leases/LEASE-ID                the service that owns the lease (plain text), bound to that lease: written
 *                                          by the control plane when a sidecar takes a lease through it
 *   ROOT/v1/policies/...                   reserved for policies (routes, limits)
 *   ROOT/v1/probe                          never written; read to check that the cluster answers with a quorum
 * </pre>
 *
 * ROOT is {@code /weft} unless the URL says {@code prefix=...}. The "v1" lets a later layout live beside this one
 * during an upgrade. Service names and ids use the same characters as the embedded control plane accepts, none of
 * which is '/', so a key splits back into service and id without ambiguity.
 */
final class KeyLayout {
    static final String DEFAULT_ROOT = "/weft";
    private static final Pattern ROOT = Pattern.compile("(/[A-Za-z0-9._-]+)+");
    private static final Pattern SERVICE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,252}");
    private static final Pattern ENDPOINT_ID = Pattern.compile("[A-Za-z0-9\\[][A-Za-z0-9._:@\\[\\]-]{0,252}");

    private static final ObjectMapper JSON = JsonMapper.builder()
            // Lenient on input: a newer Weft may add fields, an operator may leave out the defaulted ones.
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private final String root;

    KeyLayout(String root) {
        if (!ROOT.matcher(root).matches()) {
            throw new IllegalArgumentException("invalid etcd key prefix '" + root
                    + "' (expected an absolute path without trailing slash, e.g. /weft or /weft-staging)");
        }
        this.root = root;
    }

    String root() {
        return root;
    }

    String servicesPrefix() {
        return root + "/v1/services/";
    }

    ByteSequence servicePrefix(String service) {
        return bytes(servicesPrefix() + service + "/");
    }

    ByteSequence endpointKey(Endpoint endpoint) {
        return bytes(servicesPrefix() + endpoint.service() + "/" + endpoint.id());
    }

    ByteSequence leasesPrefix() {
        return bytes(root + "/v1/leases/");
    }

    /** @param leaseId the etcd lease id as the control plane's API names it: 16 lower-case hex digits */
    ByteSequence leaseOwnerKey(String leaseId) {
        return leasesPrefix().concat(bytes(leaseId));
    }

    ByteSequence policiesPrefix() {
        return bytes(root + "/v1/policies/");
    }

    ByteSequence policyKey(String name) {
        return bytes(root + "/v1/policies/" + name);
    }

    ByteSequence probeKey() {
        return bytes(root + "/v1/probe");
    }

    /** The instance id of a key under {@code service}'s prefix; null for anything else found there. */
    static String idOf(ByteSequence servicePrefix, ByteSequence key) {
        if (!key.startsWith(servicePrefix)) {
            return null;
        }
        String id = key.substring(servicePrefix.size()).toString(StandardCharsets.UTF_8);
        return ENDPOINT_ID.matcher(id).matches() ? id : null;
    }

    /** "service/id" of an endpoint key, or null for any other key. */
    String endpointName(ByteSequence key) {
        String k = key.toString(StandardCharsets.UTF_8);
        String prefix = servicesPrefix();
        if (!k.startsWith(prefix)) {
            return null;
        }
        String rest = k.substring(prefix.length());
        int slash = rest.indexOf('/');
        return slash > 0 && slash == rest.lastIndexOf('/') && slash < rest.length() - 1 ? rest : null;
    }

    /** "service/id" of each endpoint key among {@code keys} (a lease's attached keys, say); other keys are left out. */
    List<String> endpointNames(List<ByteSequence> keys) {
        List<String> out = new ArrayList<>();
        for (ByteSequence k : keys) {
            String name = endpointName(k);
            if (name != null) {
                out.add(name);
            }
        }
        return out;
    }

    /** An etcd lease id as the control plane's API names it: 16 lower-case hex digits. */
    static String leaseId(long id) {
        return HexFormat.of().toHexDigits(id);
    }

    /** The owner a lease-owner key holds, or null when its value is not a service name (written by hand). */
    static String ownerOf(ByteSequence value) {
        String owner = value.toString(StandardCharsets.UTF_8);
        return SERVICE_NAME.matcher(owner).matches() ? owner : null;
    }

    static void checkService(String service) {
        if (!SERVICE_NAME.matcher(service).matches()) {
            throw new IllegalArgumentException("invalid service name '" + service
                    + "' (expected letters, digits, '.', '_', '-', starting with a letter or digit)");
        }
    }

    static void checkEndpoint(Endpoint endpoint) {
        checkService(endpoint.service());
        if (!ENDPOINT_ID.matcher(endpoint.id()).matches()) {
            throw new IllegalArgumentException("invalid endpoint id '" + endpoint.id()
                    + "' (expected letters, digits, '.', '_', '-', ':', '@', '[', ']'; no '/')");
        }
    }

    /** The value stored at an endpoint's key: the whole endpoint, so {@code etcdctl get} alone says everything. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Value(String service, String id, String host, Integer port, Integer weight, Integer capacity,
                 Map<String, String> metadata) {}

    static ByteSequence encode(Endpoint e) {
        try {
            return ByteSequence.from(JSON.writeValueAsBytes(new Value(e.service(), e.id(), e.host(), e.port(),
                    e.weight(), e.capacity(), e.metadata())));
        } catch (IOException ex) {
            throw new IllegalStateException("cannot encode " + e, ex);   // a record of strings and ints always encodes
        }
    }

    /**
     * Reads a value written by {@link #encode} (or by hand). The key is the truth for service and id: a value copied
     * to another key describes the instance of that key.
     *
     * @throws IOException when the value is not an endpoint, naming what is wrong
     */
    static Endpoint decode(String service, String id, ByteSequence value) throws IOException {
        Value v = JSON.readValue(value.getBytes(), Value.class);
        if (v == null || v.host() == null || v.port() == null) {
            throw new IOException("endpoint value needs at least host and port, e.g. "
                    + "{\"host\":\"10.0.0.5\",\"port\":7001}");
        }
        try {
            return new Endpoint(service, id, v.host(), v.port(), v.weight() == null ? 1 : v.weight(),
                    v.capacity() == null ? 0 : v.capacity(), v.metadata());
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
