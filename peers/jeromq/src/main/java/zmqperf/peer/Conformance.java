package zmqperf.peer;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The conformance test of the JeroMQ peer (the manifest's `test`): every vector of
 * spec/header-vectors.json, then the peer against itself over tcp on 127.0.0.1 (PUSH to PULL,
 * PUB with a subscription wait to SUB, REQ to REP, DEALER to ROUTER), each in child processes
 * driven through the control protocol with every wait bounded. Exit 0 only when all pass.
 */
public final class Conformance {
    private static final long WAIT_MS = 20_000;
    private static int passed;
    private static final List<String> failures = new ArrayList<>();

    private Conformance() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: Conformance <spec/header-vectors.json>");
            System.exit(2);
        }
        vectors(args[0]);
        loopback("push-pull", node("rx", "sink", "PULL", 2000, 0), node("tx", "source", "PUSH", 2000, 0), false);
        // A PUB drops at its high-water mark: both marks above the count, so nothing can be lost.
        JsonObject pub = node("tx", "source", "PUB", 2000, 0);
        pub.addProperty("subscriptions", 1);
        JsonObject sub = node("rx", "sink", "SUB", 2000, 0);
        options(pub).addProperty("sndhwm", 10_000);
        options(sub).addProperty("rcvhwm", 10_000);
        options(sub).add("subscribe", JsonParser.parseString("[\"ZP\"]"));
        loopback("pub-sub", pub, sub, true);
        loopback("req-rep", node("echo", "echo", "REP", 500, 50), node("ping", "ping", "REQ", 500, 50), false);
        loopback("dealer-router", node("echo", "echo", "ROUTER", 500, 50), node("ping", "ping", "DEALER", 500, 50), false);
        System.out.println(passed + " passed, " + failures.size() + " failed");
        failures.forEach(f -> System.out.println("FAILED: " + f));
        System.exit(failures.isEmpty() ? 0 : 1);
    }

    private static void check(String name, boolean ok, String detail) {
        if (ok) {
            passed++;
            System.out.println("ok " + name);
        } else {
            failures.add(name + ": " + detail);
            System.out.println("FAIL " + name + ": " + detail);
        }
    }

    private static byte[] hex(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    /** Decode gives the fields, encode gives the bytes, plain is no header, errors are refused. */
    static void vectors(String path) throws IOException {
        JsonObject doc = JsonParser.parseString(Files.readString(Paths.get(path))).getAsJsonObject();
        JsonArray vs = doc.getAsJsonArray("vectors");
        check("vectors present", vs.size() > 0, "no vectors in " + path);
        for (JsonElement e : vs) {
            JsonObject v = e.getAsJsonObject();
            String name = "vector " + v.get("name").getAsString();
            byte[] bytes = hex(v.get("hex").getAsString());
            String expect = v.get("expect").getAsString();
            JeromqPeer.Header h;
            String error = null;
            try {
                h = JeromqPeer.Header.read(bytes);
            } catch (JeromqPeer.PeerError err) {
                h = null;
                error = err.getMessage();
            }
            switch (expect) {
                case "header": {
                    JsonObject f = v.getAsJsonObject("fields");
                    long seq = f.get("sequence").getAsBigInteger().longValue();
                    long ns = f.get("send_ns").getAsBigInteger().longValue();
                    boolean decoded = h != null && h.flags == f.get("flags").getAsInt()
                            && h.streamId == f.get("stream_id").getAsLong() && h.sequence == seq && h.sendNs == ns
                            && bytes[2] == f.get("version").getAsInt();
                    check(name + " decodes", decoded, error != null ? error : "fields differ");
                    byte[] out = new byte[JeromqPeer.HEADER_LEN];
                    JeromqPeer.Header.write(out, f.get("flags").getAsInt(), f.get("stream_id").getAsLong(), seq, ns);
                    check(name + " encodes", Arrays.equals(out, Arrays.copyOf(bytes, JeromqPeer.HEADER_LEN)),
                            "bytes differ");
                    break;
                }
                case "plain":
                    check(name + " is plain", h == null && error == null, error != null ? error : "decoded a header");
                    break;
                case "error:unsupported-version":
                    check(name + " refused", error != null && error.contains("version"), "not refused as a version");
                    break;
                case "error:reserved-flags":
                    check(name + " refused", error != null && error.contains("reserved"), "not refused as reserved flags");
                    break;
                default:
                    check(name, false, "unknown expectation " + expect);
            }
        }
    }

    static JsonObject options(JsonObject node) {
        return node.getAsJsonArray("sockets").get(0).getAsJsonObject().getAsJsonObject("options");
    }

    static JsonObject node(String name, String role, String kind, long count, long warmup) {
        JsonObject sock = new JsonObject();
        sock.addProperty("kind", kind);
        sock.add("bind", new JsonArray());
        sock.add("connect", new JsonArray());
        sock.add("options", new JsonObject());
        JsonArray socks = new JsonArray();
        socks.add(sock);
        JsonObject n = new JsonObject();
        n.addProperty("name", name);
        n.addProperty("role", role);
        n.add("sockets", socks);
        n.addProperty("size", 64);
        n.addProperty("count", count);
        n.addProperty("warmup", warmup);
        n.add("rate", null);
        n.addProperty("stamp_every", 16);
        n.addProperty("timeout_ms", 5000);
        n.addProperty("stream_id", 7);
        n.add("streams", JsonParser.parseString("[[7," + count + "]]"));
        n.addProperty("ends_itself", true);
        n.addProperty("expect", count + warmup);
        n.addProperty("subscriptions", 0);
        n.addProperty("delimiter", false);
        return n;
    }

    /** A peer in a child process, its stdout lines read on a thread so every wait is bounded. */
    static final class Child implements AutoCloseable {
        final String name;
        final Process p;
        final Writer in;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

        Child(JsonObject spec) throws IOException {
            name = spec.get("name").getAsString();
            String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
            String cp = System.getProperty("java.class.path");
            p = new ProcessBuilder(java, "-cp", cp, JeromqPeer.class.getName(), spec.toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            in = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
            Thread t = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String l; (l = r.readLine()) != null; ) {
                        lines.add(l);
                    }
                } catch (IOException e) {
                    // The process ended.
                }
                lines.add("{\"type\":\"eof\"}");
            });
            t.setDaemon(true);
            t.start();
        }

        JsonObject expect(String type) throws Exception {
            long deadline = System.nanoTime() + WAIT_MS * 1_000_000L;
            while (true) {
                String l = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (l == null) {
                    throw new IllegalStateException(name + ": no '" + type + "' within " + WAIT_MS + " ms");
                }
                JsonObject m = JsonParser.parseString(l).getAsJsonObject();
                String t = m.get("type").getAsString();
                if (t.equals(type)) {
                    return m;
                }
                if (t.equals("error") || t.equals("eof")) {
                    throw new IllegalStateException(name + ": " + l + " while waiting for '" + type + "'");
                }
            }
        }

        void say(String type) throws IOException {
            in.write("{\"type\":\"" + type + "\",\"v\":1}\n");
            in.flush();
        }

        int exit() throws InterruptedException {
            return p.waitFor(WAIT_MS, TimeUnit.MILLISECONDS) ? p.exitValue() : -1;
        }

        @Override
        public void close() {
            p.destroyForcibly();
        }
    }

    /**
     * Binds `server` on an ephemeral tcp port, connects `client` to it, starts both; the
     * source or ping says `sent`, the sink or echo ends by itself, the sender gets `stop`.
     */
    static void loopback(String name, JsonObject server, JsonObject client, boolean serverSends) {
        server.getAsJsonArray("sockets").get(0).getAsJsonObject().getAsJsonArray("bind").add("tcp://127.0.0.1:*");
        try (Child srv = new Child(server)) {
            JsonArray eps = srv.expect("ready").getAsJsonArray("endpoints");
            check(name + " binds a real port", eps.size() == 1 && !eps.get(0).getAsString().endsWith(":*"), "endpoints " + eps);
            client.getAsJsonArray("sockets").get(0).getAsJsonObject().add("connect", eps);
            try (Child cli = new Child(client)) {
                cli.expect("ready");
                srv.say("start");
                cli.say("start");
                Child active = serverSends ? srv : cli;
                Child passive = serverSends ? cli : srv;
                active.expect("sent");
                JsonObject pr = passive.expect("report").getAsJsonObject("report");
                active.say("stop");
                JsonObject ar = active.expect("report").getAsJsonObject("report");
                check(name + " exits 0", srv.exit() == 0 && cli.exit() == 0, "exit codes " + srv.p.exitValue() + ", " + cli.p.exitValue());
                JsonObject sender = serverSends ? server : client;
                long count = sender.get("count").getAsLong();
                long warmup = sender.get("warmup").getAsLong();
                if (sender.get("role").getAsString().equals("source")) {
                    sourceSink(name, count, ar, pr);
                } else {
                    pingEcho(name, count, warmup, ar, pr);
                }
            }
        } catch (Exception e) {
            check(name, false, e.getMessage());
        }
    }

    private static void sourceSink(String name, long count, JsonObject source, JsonObject sink) {
        check(name + " source sent all", source.getAsJsonObject("send").get("messages").getAsLong() == count,
                "send " + source.get("send"));
        check(name + " sink got all", sink.getAsJsonObject("delivered").get("messages").getAsLong() == count,
                "delivered " + sink.get("delivered"));
        JsonArray runs = sink.getAsJsonObject("ledger").getAsJsonObject("runs").getAsJsonArray("7");
        check(name + " ledger is one run 0.." + (count - 1), runs != null && runs.size() == 1
                && runs.get(0).getAsJsonArray().get(0).getAsLong() == 0
                && runs.get(0).getAsJsonArray().get(1).getAsLong() == count, "runs " + runs);
        long stamped = (count - 1) / 16 + 1 + ((count - 1) % 16 == 0 ? 0 : 1);
        check(name + " latency samples", sum(sink.getAsJsonObject("latency")) == stamped,
                "latency " + sink.get("latency") + ", expected " + stamped + " samples");
        check(name + " no cut short", !sink.has("cut_short"), "cut_short " + sink.get("cut_short"));
    }

    private static void pingEcho(String name, long count, long warmup, JsonObject ping, JsonObject echo) {
        check(name + " ping round trips", ping.getAsJsonObject("round_trips").get("messages").getAsLong() == count,
                "round_trips " + ping.get("round_trips"));
        check(name + " latency samples", sum(ping.getAsJsonObject("latency")) == count, "latency " + ping.get("latency"));
        check(name + " echo answered all", echo.getAsJsonObject("round_trips").get("messages").getAsLong() == count + warmup,
                "round_trips " + echo.get("round_trips"));
    }

    private static long sum(JsonObject hist) {
        long n = 0;
        for (JsonElement b : hist.getAsJsonArray("buckets")) {
            n += b.getAsJsonArray().get(1).getAsLong();
        }
        return n;
    }
}
