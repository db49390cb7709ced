package zmqperf.peer;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * A zmqperf peer on JeroMQ (pure Java ZMTP): plays one node of a topology (source, sink, ping
 * or echo) as docs/peers.md describes, speaking the control protocol on stdin/stdout and the
 * measurement header of docs/wire-format.md on the measured socket.
 */
public final class JeromqPeer {
    static final int HEADER_LEN = 24;
    static final int TIMESTAMP = 0x01;
    static final int END = 0x02;
    static final int WARMUP = 0x04;
    /** How often a passive role looks at the runner's stop while nothing arrives, ms. */
    static final int STOP_POLL_MS = 100;
    /** After the stop, a sink ends once this long passes without a message: a TCP stream held up
     *  for a delayed acknowledgement (up to 200 ms on Linux) is late, not lost. */
    static final long DRAIN_NS = 1_000_000_000L;

    /** Nulls are written: a field the peer does not measure is null on the wire. */
    static final Gson GSON = new GsonBuilder().serializeNulls().create();
    private static final VarHandle LE_INT =
            MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LE_LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** A failure with its exit code (docs/peers.md: 2 spec, 3 not played, 4 wait, 9 protocol). */
    static final class PeerError extends Exception {
        final int code;

        PeerError(int code, String message) {
            super(message);
            this.code = code;
        }
    }

    /** The measurement header: 24 bytes, little-endian (docs/wire-format.md). */
    static final class Header {
        final int flags;
        final long streamId;
        final long sequence;
        final long sendNs;

        Header(int flags, long streamId, long sequence, long sendNs) {
            this.flags = flags;
            this.streamId = streamId;
            this.sequence = sequence;
            this.sendNs = sendNs;
        }

        static void write(byte[] b, int flags, long streamId, long sequence, long sendNs) {
            b[0] = 'Z';
            b[1] = 'P';
            b[2] = 1;
            b[3] = (byte) flags;
            LE_INT.set(b, 4, (int) streamId);
            LE_LONG.set(b, 8, sequence);
            LE_LONG.set(b, 16, sendNs);
        }

        /** The header of a message, null for one without (plain), or a protocol error. */
        static Header read(byte[] b) throws PeerError {
            if (b.length < HEADER_LEN || b[0] != 'Z' || b[1] != 'P') {
                return null;
            }
            if (b[2] != 1) {
                throw new PeerError(9, "unsupported header version " + (b[2] & 0xff) + " (this peer reads 1)");
            }
            int flags = b[3] & 0xff;
            if ((flags & ~0x07) != 0) {
                throw new PeerError(9, String.format("reserved header flags set (0x%02x)", flags));
            }
            long stream = Integer.toUnsignedLong((int) LE_INT.get(b, 4));
            return new Header(flags, stream, (long) LE_LONG.get(b, 8), (long) LE_LONG.get(b, 16));
        }
    }

    /** The compact histogram: value rounded to 3 significant digits -> count. */
    static final class Hist {
        final HashMap<Long, long[]> buckets = new HashMap<>();

        void record(long ns) {
            buckets.computeIfAbsent(round3(Math.max(ns, 0)), k -> new long[1])[0]++;
        }

        void addAll(Hist other) {
            other.buckets.forEach((v, c) -> buckets.computeIfAbsent(v, k -> new long[1])[0] += c[0]);
        }

        long count() {
            long n = 0;
            for (long[] c : buckets.values()) {
                n += c[0];
            }
            return n;
        }

        JsonObject json() {
            JsonArray list = new JsonArray();
            buckets.forEach((v, c) -> list.add(pair(v, c[0])));
            JsonObject o = new JsonObject();
            o.add("buckets", list);
            return o;
        }

        static long round3(long v) {
            long p = 1;
            while (v / p >= 1000) {
                p *= 10;
            }
            return v - v % p;
        }
    }

    /** The compact ledger: per stream, arrivals as runs [first_seq, length, arrival_ns]. */
    static final class Runs {
        final Map<Long, List<long[]>> streams = new LinkedHashMap<>();
        private long lastStream = -1;
        private long[] lastRun;

        /** Records one sequence number; reads the clock only when a new run opens. */
        void record(long stream, long seq) {
            if (stream == lastStream && lastRun[0] + lastRun[1] == seq) {
                lastRun[1]++;
                return;
            }
            List<long[]> runs = streams.computeIfAbsent(stream, k -> new ArrayList<>());
            long[] last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
            if (last != null && last[0] + last[1] == seq) {
                last[1]++;
            } else {
                last = new long[] {seq, 1, System.nanoTime()};
                runs.add(last);
            }
            lastStream = stream;
            lastRun = last;
        }

        JsonObject json() {
            JsonObject byStream = new JsonObject();
            streams.forEach((id, runs) -> {
                JsonArray list = new JsonArray();
                for (long[] r : runs) {
                    JsonArray run = pair(r[0], r[1]);
                    run.add(r[2]);
                    list.add(run);
                }
                byStream.add(Long.toString(id), list);
            });
            JsonObject o = new JsonObject();
            o.add("runs", byStream);
            return o;
        }
    }

    /** The runner's lines on stdin: `start`, then maybe `stop` (end of input counts as stop). */
    static final class Control {
        final CountDownLatch started = new CountDownLatch(1);
        final CountDownLatch stopped = new CountDownLatch(1);
        volatile String startProblem;

        Control(InputStream in) {
            Thread t = new Thread(() -> read(in), "control");
            t.setDaemon(true);
            t.start();
        }

        private void read(InputStream in) {
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            try {
                for (String line; (line = r.readLine()) != null; ) {
                    String type = typeOf(line);
                    if (started.getCount() > 0) {
                        if (!"start".equals(type)) {
                            startProblem = "protocol error: expected start, got: " + line.strip();
                        }
                        started.countDown();
                    } else if ("stop".equals(type)) {
                        break;
                    }
                }
            } catch (IOException e) {
                // Taken as the end of input below.
            }
            if (started.getCount() > 0) {
                startProblem = "protocol error: no start signal from the runner (its input ended)";
                started.countDown();
            }
            stopped.countDown();
        }

        private static String typeOf(String line) {
            try {
                JsonElement e = JsonParser.parseString(line);
                if (e.isJsonObject() && e.getAsJsonObject().has("type")) {
                    return e.getAsJsonObject().get("type").getAsString();
                }
            } catch (RuntimeException e) {
                // Not a valid message.
            }
            return null;
        }

        void awaitStart(long timeoutMs) throws PeerError, InterruptedException {
            if (!started.await(timeoutMs, TimeUnit.MILLISECONDS)) {
                throw new PeerError(9, "protocol error: no start signal from the runner within " + timeoutMs + " ms");
            }
            if (startProblem != null) {
                throw new PeerError(9, startProblem);
            }
        }

        boolean stopRequested() {
            return stopped.getCount() == 0;
        }
    }

    /** The fields of the node spec a peer reads (docs/peers.md). */
    static final class Spec {
        static final Set<String> OPTIONS = Set.of("sndhwm", "rcvhwm", "linger", "subscribe", "routing_id", "xpub_nodrop");
        static final Map<String, Set<String>> KINDS = Map.of(
                "source", Set.of("PUB", "XPUB", "PUSH", "PAIR", "DEALER"),
                "sink", Set.of("SUB", "PULL", "PAIR", "DEALER", "ROUTER"),
                "ping", Set.of("REQ", "DEALER", "PAIR"),
                "echo", Set.of("REP", "ROUTER", "DEALER", "PAIR"));

        String name;
        String role;
        String kind;
        List<String> bind = new ArrayList<>();
        List<String> connect = new ArrayList<>();
        JsonObject options;
        int size;
        long count;
        long warmup;
        Double rate;
        long stampEvery;
        long timeoutMs;
        long streamId;
        long[][] streams;
        boolean endsItself;
        long expect;
        int subscriptions;
        boolean delimiter;

        static Spec parse(String text) throws PeerError {
            JsonObject o;
            Spec s = new Spec();
            try {
                o = JsonParser.parseString(text).getAsJsonObject();
                s.name = o.get("name").getAsString();
                s.role = o.get("role").getAsString();
                JsonObject sock = o.getAsJsonArray("sockets").get(0).getAsJsonObject();
                s.kind = sock.get("kind").getAsString();
                sock.getAsJsonArray("bind").forEach(e -> s.bind.add(e.getAsString()));
                sock.getAsJsonArray("connect").forEach(e -> s.connect.add(e.getAsString()));
                s.options = sock.has("options") && sock.get("options").isJsonObject()
                        ? sock.getAsJsonObject("options") : new JsonObject();
                s.size = o.get("size").getAsInt();
                s.count = o.get("count").getAsLong();
                s.warmup = num(o, "warmup", 0);
                s.rate = isSet(o, "rate") ? o.get("rate").getAsDouble() : null;
                s.stampEvery = Math.max(1, num(o, "stamp_every", 1));
                s.timeoutMs = num(o, "timeout_ms", 10_000);
                s.streamId = num(o, "stream_id", 0);
                JsonArray st = isSet(o, "streams") ? o.getAsJsonArray("streams") : new JsonArray();
                s.streams = new long[st.size()][];
                for (int i = 0; i < st.size(); i++) {
                    JsonArray p = st.get(i).getAsJsonArray();
                    s.streams[i] = new long[] {p.get(0).getAsLong(), p.get(1).getAsLong()};
                }
                s.endsItself = isSet(o, "ends_itself") && o.get("ends_itself").getAsBoolean();
                s.expect = num(o, "expect", 0);
                s.subscriptions = (int) num(o, "subscriptions", 0);
                s.delimiter = isSet(o, "delimiter") && o.get("delimiter").getAsBoolean();
            } catch (RuntimeException e) {
                throw new PeerError(2, "bad node spec: " + e.getMessage() + " (expected a NodeSpec as JSON, see docs/peers.md)");
            }
            s.refuseWhatItCannotPlay(o);
            return s;
        }

        private void refuseWhatItCannotPlay(JsonObject o) throws PeerError {
            Set<String> kinds = KINDS.get(role);
            if (kinds == null) {
                throw new PeerError(3, "the jeromq peer does not play the role '" + role + "' (it plays source, sink, ping, echo)");
            }
            if (!kinds.contains(kind)) {
                throw new PeerError(3, "the jeromq peer plays " + role + " on " + String.join(", ", kinds) + ", not on " + kind);
            }
            for (String key : options.keySet()) {
                if (!OPTIONS.contains(key) && !options.get(key).isJsonNull()) {
                    throw new PeerError(3, "the jeromq peer does not set the socket option '" + key + "' (it sets " + String.join(", ", OPTIONS) + ")");
                }
            }
            for (String key : List.of("frames", "log_levels", "eot", "ticks", "swarm")) {
                JsonElement e = o.get(key);
                boolean empty = e == null || e.isJsonNull() || (e.isJsonArray() && e.getAsJsonArray().size() == 0);
                if (!empty) {
                    throw new PeerError(3, "the jeromq peer does not play '" + key + "' (node " + name + ")");
                }
            }
            if (isSet(o, "io") && !"blocking".equals(o.get("io").getAsString())) {
                throw new PeerError(3, "the jeromq peer only uses blocking I/O, not io = " + o.get("io"));
            }
            List<String> all = new ArrayList<>(bind);
            all.addAll(connect);
            for (String ep : all) {
                if (!ep.startsWith("tcp://")) {
                    throw new PeerError(3, "the jeromq peer speaks tcp only, not " + ep
                            + " (JeroMQ 0.6's ipc is tcp on a port hashed from the path, which libzmq's ipc cannot reach)");
                }
            }
        }

        private static boolean isSet(JsonObject o, String key) {
            return o.has(key) && !o.get(key).isJsonNull();
        }

        private static long num(JsonObject o, String key, long dflt) {
            return isSet(o, key) ? o.get(key).getAsLong() : dflt;
        }

        String endpoint() {
            return !connect.isEmpty() ? connect.get(0) : bind.isEmpty() ? "(no endpoint)" : bind.get(0);
        }
    }

    // ----- the node -----

    private final Spec spec;
    private final Control ctl;
    private final ZContext ctx = new ZContext(1);
    private ZMQ.Socket sock;
    private String endpoint;

    JeromqPeer(Spec spec, Control ctl) {
        this.spec = spec;
        this.ctl = ctl;
    }

    /** Opens, binds and connects the socket, then writes `ready`. */
    void open() throws PeerError {
        boolean xpub = spec.kind.equals("XPUB") || (spec.kind.equals("PUB") && spec.subscriptions > 0);
        sock = ctx.createSocket(xpub ? SocketType.XPUB : SocketType.valueOf(spec.kind));
        JsonObject opt = spec.options;
        sock.setLinger(intOpt(opt, "linger", 0));
        if (has(opt, "sndhwm")) {
            sock.setSndHWM(opt.get("sndhwm").getAsInt());
        }
        if (has(opt, "rcvhwm")) {
            sock.setRcvHWM(opt.get("rcvhwm").getAsInt());
        }
        if (has(opt, "routing_id")) {
            sock.setIdentity(opt.get("routing_id").getAsString().getBytes(StandardCharsets.UTF_8));
        }
        if (xpub) {
            sock.setXpubVerbose(true);
        }
        if (has(opt, "xpub_nodrop") && opt.get("xpub_nodrop").getAsBoolean()) {
            if (!xpub) {
                throw new PeerError(3, "xpub_nodrop is an option of an XPUB (or of a PUB waiting for subscriptions), not of " + spec.kind);
            }
            sock.setXpubNoDrop(true);
        }
        if (spec.kind.equals("SUB")) {
            JsonArray topics = has(opt, "subscribe") ? opt.getAsJsonArray("subscribe") : new JsonArray();
            if (topics.size() == 0) {
                sock.subscribe(new byte[0]);
            }
            topics.forEach(t -> sock.subscribe(t.getAsString().getBytes(StandardCharsets.UTF_8)));
        }
        sock.setSendTimeOut((int) spec.timeoutMs);
        JsonArray bound = new JsonArray();
        for (String ep : spec.bind) {
            sock.bind(ep);
            bound.add(sock.getLastEndpoint());
        }
        for (String ep : spec.connect) {
            sock.connect(ep);
        }
        endpoint = bound.size() > 0 ? bound.get(0).getAsString() : spec.endpoint();
        JsonObject ready = message("ready");
        ready.add("endpoints", bound);
        emit(ready);
    }

    JsonObject run() throws PeerError, InterruptedException {
        open();
        ctl.awaitStart(spec.timeoutMs);
        switch (spec.role) {
            case "source":
                return source();
            case "sink":
                return sink();
            case "ping":
                return ping();
            default:
                return echo();
        }
    }

    private void send(byte[] m, int flags, long i) throws PeerError {
        if (!sock.send(m, flags)) {
            String what = "message " + i + " could not be sent within " + spec.timeoutMs + " ms on " + endpoint;
            if (i == 0 && !spec.connect.isEmpty()) {
                throw new PeerError(4, "JeroMQ stalled on the first message: " + what + " (its connection never completed;"
                        + " JeroMQ's connect is known to stall at times: run again)");
            }
            throw new PeerError(4, what + " (no peer took it: is the other side running and connected?)");
        }
    }

    private JsonObject source() throws PeerError, InterruptedException {
        JsonObject report = emptyReport();
        if (spec.subscriptions > 0) {
            sock.setReceiveTimeOut((int) spec.timeoutMs);
            long t = System.nanoTime();
            for (int seen = 0; seen < spec.subscriptions; ) {
                byte[] sub = sock.recv(0);
                if (sub == null) {
                    throw new PeerError(4, seen + " of " + spec.subscriptions + " subscriptions arrived within "
                            + spec.timeoutMs + " ms on " + endpoint);
                }
                if (sub.length > 0 && sub[0] == 1) {
                    seen++;
                }
            }
            report.addProperty("subscription_wait_ns", System.nanoTime() - t);
        }
        boolean header = spec.size >= HEADER_LEN;
        for (long i = 0; i < spec.warmup; i++) {
            // JeroMQ keeps the array it is given until the I/O thread has written it: a new one each time.
            byte[] m = new byte[spec.size];
            if (header) {
                Header.write(m, WARMUP, spec.streamId, i, 0);
            }
            send(m, 0, i);
        }
        Hist delay = new Hist();
        long last = spec.count - 1;
        long start = System.nanoTime();
        if (spec.rate == null) {
            for (long i = 0; i < spec.count; i++) {
                byte[] m = new byte[spec.size];
                if (header) {
                    boolean stamp = i % spec.stampEvery == 0 || i == last;
                    int flags = (stamp ? TIMESTAMP : 0) | (i == last ? END : 0);
                    Header.write(m, flags, spec.streamId, i, stamp ? System.nanoTime() : 0);
                }
                send(m, 0, i);
            }
        } else {
            double interval = 1e9 / spec.rate;
            for (long i = 0; i < spec.count; i++) {
                long due = start + (long) (i * interval);
                waitUntil(due);
                delay.record(System.nanoTime() - due);
                byte[] m = new byte[spec.size];
                if (header) {
                    Header.write(m, TIMESTAMP | (i == last ? END : 0), spec.streamId, i, due);
                }
                send(m, 0, i);
            }
            report.add("send_delay", delay.json());
        }
        long end = System.nanoTime();
        JsonObject sent = message("sent");
        sent.addProperty("first_send_ns", start);
        sent.addProperty("last_send_ns", end);
        emit(sent);
        ctl.stopped.await(spec.timeoutMs, TimeUnit.MILLISECONDS);
        sock.setLinger(0);
        ctx.close();
        report.addProperty("closed_ns", System.nanoTime());
        report.add("send", span(spec.count, spec.count * spec.size, start, end));
        report.addProperty("header", header);
        return report;
    }

    private static void waitUntil(long due) {
        for (long left; (left = due - System.nanoTime()) > 0; ) {
            if (left > 200_000) {
                LockSupport.parkNanos(left - 100_000);
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /** One whole message: its last frame (a ROUTER's identity and any delimiter before it are dropped). */
    private byte[] recvLast() {
        byte[] m = sock.recv(0);
        while (m != null && sock.hasReceiveMore()) {
            m = sock.recv(0);
        }
        return m;
    }

    private JsonObject sink() throws PeerError {
        sock.setReceiveTimeOut((int) Math.min(STOP_POLL_MS, spec.timeoutMs));
        Map<Long, Hist> byStream = new HashMap<>();
        Set<Long> ended = new java.util.HashSet<>();
        Runs runs = new Runs();
        long total = 0;
        for (long[] s : spec.streams) {
            total += s[1];
        }
        long plainWarm = spec.warmup * spec.streams.length;
        long seen = 0;
        long received = 0;
        long bytes = 0;
        long start = 0;
        long lastRead = 0;
        long idleSince = 0;
        boolean header = false;
        String cutShort = null;
        boolean endedByMark = false;
        while (true) {
            byte[] m = recvLast();
            if (m == null) {
                long now = System.nanoTime();
                idleSince = idleSince == 0 ? now - STOP_POLL_MS * 1_000_000L : idleSince;
                if (ctl.stopRequested() && now - idleSince >= DRAIN_NS) {
                    break;
                }
                if (now - idleSince >= spec.timeoutMs * 1_000_000L) {
                    cutShort = "nothing arrived for " + spec.timeoutMs + " ms" + (received > 0
                            ? " after " + received + " of " + total + " messages" : "");
                    break;
                }
                continue;
            }
            idleSince = 0;
            seen++;
            Header h = Header.read(m);
            if (h == null) {
                // No header: counted only (a size under 24, or a sender without zmqperf's header).
                if (seen <= plainWarm) {
                    continue;
                }
                received++;
                bytes += m.length;
                if (received == 1 || (received & 15) == 0) {
                    lastRead = System.nanoTime();
                    start = received == 1 ? lastRead : start;
                }
                if (spec.endsItself && received == total) {
                    endedByMark = true;
                    break;
                }
                continue;
            }
            header = true;
            if ((h.flags & WARMUP) != 0) {
                continue;
            }
            boolean stamped = (h.flags & TIMESTAMP) != 0;
            long now = stamped || received == 0 || (h.flags & END) != 0 ? System.nanoTime() : 0;
            if (received == 0) {
                start = now;
            }
            lastRead = Math.max(lastRead, now);
            received++;
            bytes += m.length;
            runs.record(h.streamId, h.sequence);
            if (stamped) {
                byStream.computeIfAbsent(h.streamId, k -> new Hist()).record(now - h.sendNs);
            }
            if ((h.flags & END) != 0 && ended.add(h.streamId) && spec.endsItself && allEnded(ended)) {
                endedByMark = true;
                break;
            }
        }
        long end = endedByMark ? System.nanoTime() : Math.max(lastRead, start);
        JsonObject report = emptyReport();
        if (header) {
            Hist all = new Hist();
            JsonArray perStream = new JsonArray();
            for (long[] s : spec.streams) {
                Hist h = byStream.getOrDefault(s[0], new Hist());
                JsonArray p = new JsonArray();
                p.add(s[0]);
                p.add(h.json());
                perStream.add(p);
            }
            byStream.values().forEach(all::addAll);
            report.add("latency", all.json());
            report.add("stream_latency", perStream);
            report.add("ledger", runs.json());
        }
        report.add("delivered", span(received, bytes, start, received == 0 ? start : end));
        report.addProperty("header", header);
        if (cutShort != null) {
            report.addProperty("cut_short", cutShort);
        }
        return report;
    }

    private boolean allEnded(Set<Long> ended) {
        for (long[] s : spec.streams) {
            if (!ended.contains(s[0])) {
                return false;
            }
        }
        return true;
    }

    private JsonObject ping() throws PeerError {
        sock.setReceiveTimeOut((int) spec.timeoutMs);
        boolean header = spec.size >= HEADER_LEN;
        long total = spec.warmup + spec.count;
        Hist latency = new Hist();
        long start = System.nanoTime();
        for (long i = 0; i < total; i++) {
            boolean warm = i < spec.warmup;
            if (i == spec.warmup) {
                start = System.nanoTime();
            }
            byte[] m = new byte[spec.size];
            long t0 = System.nanoTime();
            if (header) {
                Header.write(m, TIMESTAMP | (warm ? WARMUP : 0), spec.streamId, i, t0);
            }
            if (spec.delimiter) {
                send(new byte[0], ZMQ.SNDMORE, i);
            }
            send(m, 0, i);
            byte[] reply = recvLast();
            long t1 = System.nanoTime();
            if (reply == null) {
                String what = "no reply to request " + i + " within " + spec.timeoutMs + " ms from " + endpoint;
                if (i == 0 && spec.kind.equals("REQ")) {
                    throw new PeerError(4, "JeroMQ REQ stalled on the first request: " + what
                            + " (JeroMQ's REQ is known to stall on its first message at times; run again,"
                            + " or play the ping on DEALER with delimiter = true against a REP)");
                }
                throw new PeerError(4, what);
            }
            if (header) {
                Header h = Header.read(reply);
                if (h == null || h.sequence != i) {
                    throw new PeerError(9, "protocol error: reply " + i + (h == null
                            ? " does not carry its request's header" : " carries sequence " + h.sequence
                            + "; the echo side answered out of order"));
                }
            }
            if (!warm) {
                latency.record((t1 - t0) / 2);
            }
        }
        long end = System.nanoTime();
        emit(message("sent"));
        JsonObject report = emptyReport();
        report.add("latency", latency.json());
        report.add("round_trips", span(spec.count, spec.count * spec.size, start, end));
        report.addProperty("header", header);
        return report;
    }

    private JsonObject echo() throws PeerError {
        sock.setReceiveTimeOut((int) Math.min(STOP_POLL_MS, spec.timeoutMs));
        List<byte[]> frames = new ArrayList<>();
        long done = 0;
        long bytes = 0;
        long start = 0;
        long idleSince = 0;
        String cutShort = null;
        while (!(spec.endsItself && done == spec.expect)) {
            byte[] f = sock.recv(0);
            if (f == null) {
                long now = System.nanoTime();
                if (ctl.stopRequested()) {
                    break;
                }
                idleSince = idleSince == 0 ? now - STOP_POLL_MS * 1_000_000L : idleSince;
                if (now - idleSince >= spec.timeoutMs * 1_000_000L) {
                    cutShort = "idle: no request for " + spec.timeoutMs + " ms after " + done + " round trips";
                    break;
                }
                continue;
            }
            idleSince = 0;
            if (done == 0) {
                start = System.nanoTime();
            }
            frames.clear();
            frames.add(f);
            while (sock.hasReceiveMore()) {
                frames.add(sock.recv(0));
            }
            for (int k = 0; k < frames.size(); k++) {
                send(frames.get(k), k + 1 < frames.size() ? ZMQ.SNDMORE : 0, done);
            }
            bytes += frames.get(frames.size() - 1).length;
            done++;
        }
        long end = System.nanoTime();
        JsonObject report = emptyReport();
        report.add("round_trips", span(done, bytes, start, done == 0 ? start : end));
        if (cutShort != null) {
            report.addProperty("cut_short", cutShort);
        }
        return report;
    }

    /**
     * Closes the socket and terminates the context. ZContext gives every socket its own linger
     * at close: 0, except for an echo, whose last reply must reach its ping (the topology's
     * linger, or up to 1 s).
     */
    void close() {
        if (spec.role.equals("echo")) {
            ctx.setLinger(intOpt(spec.options, "linger", (int) Math.min(1000, spec.timeoutMs)));
        }
        ctx.close();
    }

    // ----- JSON of the protocol -----

    static JsonObject message(String type) {
        JsonObject o = new JsonObject();
        o.addProperty("type", type);
        o.addProperty("v", 1);
        return o;
    }

    static synchronized void emit(JsonObject o) {
        System.out.println(GSON.toJson(o));
        System.out.flush();
    }

    static JsonArray pair(long a, long b) {
        JsonArray p = new JsonArray();
        p.add(a);
        p.add(b);
        return p;
    }

    static JsonObject span(long messages, long bytes, long startNs, long endNs) {
        JsonObject o = new JsonObject();
        o.addProperty("messages", messages);
        o.addProperty("payload_bytes", bytes);
        o.addProperty("start_ns", startNs);
        o.addProperty("end_ns", endNs);
        return o;
    }

    private JsonObject emptyReport() {
        JsonObject r = new JsonObject();
        for (String k : List.of("latency", "send_delay", "send", "delivered", "ledger")) {
            r.add(k, null);
        }
        r.add("usage", usage(spec.role));
        return r;
    }

    /** CPU times from /proc/self/stat (clock ticks of 10 ms) and VmHWM from /proc/self/status. */
    static JsonObject usage(String role) {
        JsonObject u = new JsonObject();
        u.addProperty("role", role);
        u.addProperty("placement", "foreign");
        try {
            String stat = Files.readString(Paths.get("/proc/self/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            u.addProperty("cpu_user_ms", Long.parseLong(f[11]) * 10.0);
            u.addProperty("cpu_sys_ms", Long.parseLong(f[12]) * 10.0);
            long hwm = 0;
            for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    hwm = Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
            u.addProperty("peak_rss_kib", hwm);
            return u;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static boolean has(JsonObject o, String key) {
        return o.has(key) && !o.get(key).isJsonNull();
    }

    private static int intOpt(JsonObject o, String key, int dflt) {
        return has(o, key) ? o.get(key).getAsInt() : dflt;
    }

    static JsonObject version() {
        Properties p = new Properties();
        try (InputStream in = JeromqPeer.class.getResourceAsStream("/zmqperf-peer.properties")) {
            p.load(in);
        } catch (IOException | NullPointerException e) {
            p.setProperty("jeromq", "unknown");
        }
        JsonObject o = new JsonObject();
        o.addProperty("binding", "JeroMQ " + p.getProperty("jeromq"));
        o.addProperty("engine", "pure Java (Java " + System.getProperty("java.version") + ", libzmq API "
                + ZMQ.getVersionString() + ")");
        return o;
    }

    static void fail(String message, int code) {
        JsonObject e = message("error");
        e.addProperty("message", message);
        e.addProperty("exit_code", code);
        emit(e);
        System.exit(code);
    }

    public static void main(String[] args) {
        if (args.length == 1 && args[0].equals("--version")) {
            emit(version());
            return;
        }
        if (args.length != 1) {
            fail("usage: jeromq-peer '<node spec as JSON>' | --version (see peers/jeromq/README.md)", 2);
        }
        JeromqPeer peer = null;
        try {
            Spec spec = Spec.parse(args[0]);
            peer = new JeromqPeer(spec, new Control(System.in));
            JsonObject report = peer.run();
            peer.close();
            JsonObject line = message("report");
            line.add("report", report);
            emit(line);
            System.exit(0);
        } catch (PeerError e) {
            fail(e.getMessage(), e.code);
        } catch (ZMQException e) {
            fail("JeroMQ call failed: " + e.getMessage() + " (" + ZMQ.Error.findByCode(e.getErrorCode()) + ")", 10);
        } catch (InterruptedException | RuntimeException e) {
            fail("jeromq peer failed: " + e, 10);
        }
    }
}
