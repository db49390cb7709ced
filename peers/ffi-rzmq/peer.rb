#!/usr/bin/env ruby
# frozen_string_literal: true

# zmqperf peer on ffi-rzmq: plays one node (source, sink, ping, echo) of a topology for
# zmqperf's runner, as docs/peers.md describes. The hot loops use the binding as a Ruby
# program does: send_string for what it writes, recvmsg into a reused ZMQ::Message for what
# it reads (24 header bytes read out of it), and the echo sends the received messages back.
#
#   ruby peer.rb '<node spec as JSON>'   control lines on stdin/stdout
#   ruby peer.rb --version               {"binding": ..., "engine": ...}

require 'json'
require 'ffi-rzmq'

module ZmqperfPeer
  HEADER_LEN = 24
  TIMESTAMP = 0x01
  END_MARK = 0x02
  WARMUP = 0x04
  RESERVED = 0xF8
  SLICE_MS = 100 # a blocking receive gives up this often to look at the runner's stop
  # After the stop, a sink ends once this long passes without a message: a TCP stream held up
  # for a delayed acknowledgement (up to 200 ms on Linux) is late, not lost.
  DRAIN_MS = 1000

  # A failure with the exit code of docs/peers.md (2 spec, 3 unsupported, 4 timeout, 9 protocol).
  class Failure < StandardError
    attr_reader :code

    def initialize(code, message)
      super(message)
      @code = code
    end
  end

  # The 24-byte measurement header (docs/wire-format.md), little-endian.
  module Header
    LAYOUT = 'a2CCVQ<Q<'

    def self.encode(flags, stream_id, sequence, send_ns)
      ['ZP', 1, flags, stream_id, sequence, send_ns].pack(LAYOUT)
    end

    # nil for a message without the header; [flags, stream_id, sequence, send_ns] otherwise.
    def self.decode(bytes)
      return nil if bytes.bytesize < HEADER_LEN || !bytes.start_with?('ZP')

      _magic, version, flags, stream_id, sequence, send_ns = bytes.unpack(LAYOUT)
      raise Failure.new(9, "protocol error: header version #{version} (this peer reads version 1)") if version != 1
      raise Failure.new(9, format('protocol error: reserved header flags set (0x%02x)', flags)) if flags & RESERVED != 0

      [flags, stream_id, sequence, send_ns]
    end
  end

  def self.now_ns
    Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
  end

  # Compact histogram: each value rounded down to 3 significant digits, with its count.
  class Histogram
    def initialize
      @counts = Hash.new(0)
    end

    def record(value)
      scale = 1
      scale *= 10 while value >= 1000 * scale
      @counts[value / scale * scale] += 1
    end

    def merge(other)
      other.to_h.each { |v, c| @counts[v] += c }
    end

    def to_h = @counts

    def to_json_value = { 'buckets' => @counts.to_a }
  end

  # The runner's lines on stdin, read by a thread of their own.
  class Control
    def initialize(input)
      @lock = Mutex.new
      @changed = ConditionVariable.new
      @started = @stopped = @not_start = false
      Thread.new { read(input) }
    end

    def stopped? = @stopped

    def wait_for_start(timeout_ms)
      deadline = ZmqperfPeer.now_ns + timeout_ms * 1_000_000
      @lock.synchronize do
        until @started
          raise Failure.new(9, 'protocol error: expected start') if @not_start

          left = (deadline - ZmqperfPeer.now_ns) / 1e9
          raise Failure.new(9, 'protocol error: no start signal from the runner') if @stopped || left <= 0

          @changed.wait(@lock, left)
        end
      end
    end

    # The runner's stop (or the end of stdin), waited for at most timeout_ms.
    def wait_for_stop(timeout_ms)
      deadline = ZmqperfPeer.now_ns + timeout_ms * 1_000_000
      @lock.synchronize do
        until @stopped
          left = (deadline - ZmqperfPeer.now_ns) / 1e9
          break if left <= 0

          @changed.wait(@lock, left)
        end
      end
    end

    private

    def read(input)
      input.each_line do |line|
        type = begin
          JSON.parse(line)['type']
        rescue JSON::ParserError, NoMethodError, TypeError
          nil
        end
        @lock.synchronize do
          case type
          when 'start' then @started = true
          when 'stop' then @stopped = true
          else @not_start ||= !@started
          end
          @changed.broadcast
        end
      end
    ensure
      @lock.synchronize do
        @stopped = true # the end of stdin is a stop
        @changed.broadcast
      end
    end
  end

  KINDS = {
    'PAIR' => ZMQ::PAIR, 'PUB' => ZMQ::PUB, 'SUB' => ZMQ::SUB, 'XPUB' => ZMQ::XPUB, 'XSUB' => ZMQ::XSUB,
    'REQ' => ZMQ::REQ, 'REP' => ZMQ::REP, 'DEALER' => ZMQ::DEALER, 'ROUTER' => ZMQ::ROUTER,
    'PUSH' => ZMQ::PUSH, 'PULL' => ZMQ::PULL
  }.freeze

  PLAYS = {
    'source' => %w[PUB XPUB PUSH PAIR DEALER],
    'sink' => %w[SUB XSUB PULL PAIR DEALER ROUTER],
    'ping' => %w[REQ DEALER PAIR],
    'echo' => %w[REP ROUTER DEALER PAIR]
  }.freeze

  INT_OPTIONS = {
    'sndhwm' => ZMQ::SNDHWM, 'rcvhwm' => ZMQ::RCVHWM, 'linger' => ZMQ::LINGER, 'sndbuf' => ZMQ::SNDBUF,
    'rcvbuf' => ZMQ::RCVBUF, 'immediate' => ZMQ::IMMEDIATE, 'conflate' => ZMQ::CONFLATE,
    'xpub_verbose' => ZMQ::XPUB_VERBOSE, 'xpub_nodrop' => ZMQ::XPUB_NODROP,
    'router_mandatory' => ZMQ::ROUTER_MANDATORY, 'tcp_keepalive' => ZMQ::TCP_KEEPALIVE
  }.freeze

  # One node: its spec, its socket, its role.
  class Node
    def initialize(spec, out)
      @spec = spec
      @out = out
      @name = spec.fetch('name')
      @role = spec.fetch('role')
      @timeout_ms = spec.fetch('timeout_ms')
      @size = spec.fetch('size')
      sockets = spec.fetch('sockets')
      raise Failure.new(3, "node #{@name}: the ffi-rzmq peer plays one socket, not #{sockets.size}") if sockets.size != 1

      @sock_spec = sockets.first
      @kind = @sock_spec.fetch('kind')
    rescue KeyError => e
      raise Failure.new(2, "bad node spec: #{e.message}")
    end

    def run
      @control = Control.new($stdin)
      open_socket
      report = send("run_#{@role}")
      close
      report['usage'] = usage
      line('report', 'report' => report)
    end

    private

    # Linger 0 (set at open): closing throws away whatever is still queued, at once; an
    # echo's last reply is only queued, so an echo closes with a linger (the topology's, or
    # 1 s) and it reaches its ping before the process ends.
    def close
      return if @closed

      if @role == 'echo'
        linger = (@sock_spec['options'] || {})['linger']
        set_int(ZMQ::LINGER, linger.is_a?(Integer) && linger >= 0 ? linger : 1000, 'linger')
      end
      @socket.close
      @context.terminate
      @closed = true
    end

    def line(type, fields = {})
      @out.write(JSON.generate({ 'type' => type, 'v' => 1 }.merge(fields)), "\n")
      @out.flush
    end

    def check(rc, what)
      return rc if ZMQ::Util.resultcode_ok?(rc)

      raise Failure.new(3, "node #{@name}: #{what}: #{ZMQ::Util.error_string}")
    end

    # Integer options: through the binding's setsockopt where it knows them, else libzmq's own.
    def set_int(option, value, what)
      rc = if ZMQ::IntegerSocketOptions.include?(option)
             @socket.setsockopt(option, value)
           else
             pointer = FFI::MemoryPointer.new(:int)
             pointer.write_int(value)
             LibZMQ.zmq_setsockopt(@socket.socket, option, pointer, pointer.size)
           end
      check(rc, "cannot set #{what} = #{value}")
    end

    def open_socket
      type = KINDS[@kind] or raise Failure.new(2, "bad node spec: unknown socket type '#{@kind}'")
      unless PLAYS.fetch(@role, []).include?(@kind)
        raise Failure.new(3, "node #{@name}: the ffi-rzmq peer does not play role '#{@role}' on a #{@kind} socket")
      end

      # A source that must see its subscribers first opens its PUB as an XPUB.
      @subscribing = @role == 'source' && @spec.fetch('subscriptions', 0).positive? && %w[PUB XPUB].include?(@kind)
      type = ZMQ::XPUB if @subscribing
      @context = ZMQ::Context.new
      @socket = @context.socket(type) or raise Failure.new(3, "cannot open a #{@kind} socket: #{ZMQ::Util.error_string}")
      set_int(ZMQ::LINGER, 0, 'linger')
      set_int(ZMQ::XPUB_VERBOSE, 1, 'xpub_verbose') if @subscribing
      set_int(ZMQ::RCVTIMEO, SLICE_MS, 'rcvtimeo')
      set_int(ZMQ::SNDTIMEO, @timeout_ms, 'sndtimeo')
      apply_options
      endpoints = @sock_spec.fetch('bind', []).map do |endpoint|
        check(@socket.bind(endpoint), "cannot bind #{endpoint}")
        found = []
        @socket.getsockopt(ZMQ::LAST_ENDPOINT, found)
        found.first.delete("\0")
      end
      @sock_spec.fetch('connect', []).each do |endpoint|
        check(@socket.connect(endpoint), "cannot connect to #{endpoint}")
      end
      line('ready', 'endpoints' => endpoints)
    end

    def apply_options
      options = @sock_spec['options'] || {}
      options.each do |name, value|
        next if value.nil? || name == 'subscribe'

        if name == 'routing_id'
          check(@socket.setsockopt(ZMQ::IDENTITY, value.to_s), 'cannot set routing_id')
        elsif (option = INT_OPTIONS[name])
          set_int(option, value == true ? 1 : (value == false ? 0 : value), name)
        else
          raise Failure.new(3, "node #{@name}: the ffi-rzmq peer does not play socket option '#{name}' " \
                               '(remove it or play the node with zmqperf)')
        end
      end
      return unless %w[SUB XSUB].include?(@kind)

      prefixes = options['subscribe'] || []
      prefixes = [''] if prefixes.empty?
      prefixes.each do |prefix|
        if @kind == 'SUB'
          check(@socket.setsockopt(ZMQ::SUBSCRIBE, prefix), "cannot subscribe to '#{prefix}'")
        else
          check(@socket.send_string("\x01".b + prefix.b), "cannot send the subscription '#{prefix}'")
        end
      end
    end

    def peer_endpoint
      (@sock_spec['connect'] || []).first || (@sock_spec['bind'] || []).first || '(no endpoint)'
    end

    def eagain?
      ZMQ::Util.errno == ZMQ::EAGAIN
    end

    # Receives into msg, giving up after one slice: true, or false when the slice ran out.
    def receive(msg)
      return true if ZMQ::Util.resultcode_ok?(@socket.recvmsg(msg))
      return false if eagain?

      raise Failure.new(9, "receive failed: #{ZMQ::Util.error_string}")
    end

    def more?(msg) = msg.get(ZMQ::MORE) == 1

    def span(messages, bytes, start_ns, end_ns)
      { 'messages' => messages, 'payload_bytes' => bytes, 'start_ns' => start_ns, 'end_ns' => end_ns }
    end

    def empty_report
      { 'latency' => nil, 'send_delay' => nil, 'send' => nil, 'delivered' => nil, 'ledger' => nil }
    end

    def usage
      times = Process.times
      hwm = File.foreach('/proc/self/status').find { |l| l.start_with?('VmHWM:') }
      { 'role' => @role, 'placement' => 'foreign', 'cpu_user_ms' => times.utime * 1e3,
        'cpu_sys_ms' => times.stime * 1e3, 'peak_rss_kib' => hwm ? hwm.split[1].to_i : 0 }
    end

    def payload(flags, sequence, send_ns)
      return "\0".b * @size if @size < HEADER_LEN

      @buffer ||= "\0".b * @size
      @buffer[0, HEADER_LEN] = Header.encode(flags, @spec.fetch('stream_id', 0), sequence, send_ns)
      @buffer
    end

    def send_or_fail(data, what)
      return if ZMQ::Util.resultcode_ok?(@socket.send_string(data))

      raise Failure.new(4, "#{what} not taken within #{@timeout_ms} ms by #{peer_endpoint}") if eagain?

      raise Failure.new(9, "send failed: #{ZMQ::Util.error_string}")
    end

    def run_source
      report = empty_report
      @control.wait_for_start(@timeout_ms)
      report['subscription_wait_ns'] = wait_for_subscriptions if @subscribing
      count = @spec.fetch('count')
      warmup = @spec.fetch('warmup', 0)
      rate = @spec['rate']
      stamp_every = [@spec.fetch('stamp_every', 1), 1].max
      warmup.times { |i| send_or_fail(payload(WARMUP, i, 0), "warm-up message #{i}") }
      delay = Histogram.new if rate
      interval = rate ? 1e9 / rate : 0
      first = ZmqperfPeer.now_ns
      count.times do |i|
        flags = i + 1 == count ? END_MARK : 0
        if rate
          due = first + (i * interval).to_i
          wait = due - ZmqperfPeer.now_ns
          sleep(wait / 1e9) if wait.positive?
          delay.record([ZmqperfPeer.now_ns - due, 0].max)
          stamp = due
          flags |= TIMESTAMP
        elsif (i % stamp_every).zero? || i + 1 == count
          stamp = ZmqperfPeer.now_ns
          flags |= TIMESTAMP
        else
          stamp = 0
        end
        send_or_fail(payload(flags, i, stamp), "message #{i}")
      end
      last = ZmqperfPeer.now_ns
      line('sent', 'first_send_ns' => first, 'last_send_ns' => last)
      report['send'] = span(count, count * @size, first, last)
      report['send_delay'] = delay.to_json_value if rate
      @control.wait_for_stop(@timeout_ms)
      close
      report['closed_ns'] = ZmqperfPeer.now_ns
      report
    end

    def wait_for_subscriptions
      want = @spec.fetch('subscriptions')
      start = ZmqperfPeer.now_ns
      seen = 0
      waited = 0
      msg = ZMQ::Message.new
      while seen < want
        if receive(msg)
          seen += 1 if msg.size.positive? && msg.data.get_uint8(0) == 1
          next
        end
        waited += SLICE_MS
        if waited >= @timeout_ms
          raise Failure.new(4, "saw #{seen} of #{want} subscriptions within #{@timeout_ms} ms on #{peer_endpoint}")
        end
      end
      ZmqperfPeer.now_ns - start
    end

    # One stream's ledger (runs of consecutive sequence numbers) and latency.
    Stream = Struct.new(:runs, :latency, :ended) do
      def record(sequence)
        last = runs.last
        if last && last[0] + last[1] == sequence
          last[1] += 1
        else
          runs << [sequence, 1, ZmqperfPeer.now_ns]
        end
      end
    end

    def run_sink
      streams = Hash.new { |h, id| h[id] = Stream.new([], Histogram.new, false) }
      expected = @spec.fetch('streams', []).map(&:first)
      expected.each { |id| streams[id] }
      ends_itself = @spec.fetch('ends_itself', false)
      warmup = @spec.fetch('warmup', 0)
      routed = @kind == 'ROUTER'
      msg = ZMQ::Message.new
      rest = ZMQ::Message.new
      received = bytes = start = last_read = idle_ms = plain = ends = 0
      headed = false
      cut_short = nil
      @control.wait_for_start(@timeout_ms)
      loop do
        unless receive(msg)
          idle_ms += SLICE_MS
          if @control.stopped?
            next if idle_ms < DRAIN_MS

            if ends_itself && !expected.empty? && ends < expected.size
              cut_short = "the end of the stream never came: #{received} messages arrived before the senders " \
                          'finished and the queue ran dry'
            end
            break
          end
          next if idle_ms < @timeout_ms
          if received.zero? && ends_itself
            raise Failure.new(4, "nothing arrived within #{@timeout_ms} ms on #{peer_endpoint}")
          end

          cut_short = "nothing arrived for #{idle_ms} ms"
          break
        end
        idle_ms = 0
        # A ROUTER's identity and empty delimiters go; frames after the payload are read and dropped.
        skip = routed
        while more?(msg) && (skip || msg.size.zero?)
          skip = false
          @socket.recvmsg(msg)
        end
        more = more?(msg)
        while more
          @socket.recvmsg(rest)
          more = more?(rest)
        end
        size = msg.size
        header = size >= HEADER_LEN ? Header.decode(msg.data.read_string(HEADER_LEN)) : nil
        unless header
          plain += 1
          next if plain <= warmup

          start = last_read = ZmqperfPeer.now_ns if received.zero?
          received += 1
          bytes += size
          next
        end
        flags, stream_id, sequence, send_ns = header
        next if flags & WARMUP != 0

        headed = true
        stamped = flags & TIMESTAMP != 0
        now = stamped || received.zero? ? ZmqperfPeer.now_ns : nil
        start = now if received.zero?
        last_read = now if now
        received += 1
        bytes += size
        stream = streams[stream_id]
        stream.record(sequence)
        stream.latency.record([now - send_ns, 0].max) if stamped
        next unless flags & END_MARK != 0 && !stream.ended

        stream.ended = true
        ends += 1
        break if ends_itself && !expected.empty? && ends >= expected.size
      end
      report = empty_report
      report['delivered'] = span(received, bytes, start, received.zero? ? start : last_read)
      report['header'] = headed
      report['cut_short'] = cut_short if cut_short
      if headed
        all = Histogram.new
        streams.each_value { |s| all.merge(s.latency) }
        report['latency'] = all.to_json_value
        report['stream_latency'] = streams.map { |id, s| [id, s.latency.to_json_value] }
        report['ledger'] = { 'runs' => streams.to_h { |id, s| [id.to_s, s.runs] } }
      end
      report
    end

    def run_ping
      count = @spec.fetch('count')
      warmup = @spec.fetch('warmup', 0)
      delimited = @kind == 'DEALER' && @spec.fetch('delimiter', false)
      latency = Histogram.new
      reply = ZMQ::Message.new
      start = finish = nil
      @control.wait_for_start(@timeout_ms)
      (warmup + count).times do |i|
        warm = i < warmup
        sequence = warm ? i : i - warmup
        t0 = ZmqperfPeer.now_ns
        request = payload(TIMESTAMP | (warm ? WARMUP : 0), sequence, t0)
        if delimited && !ZMQ::Util.resultcode_ok?(@socket.send_string('', ZMQ::SNDMORE))
          raise Failure.new(4, "request #{sequence} not taken within #{@timeout_ms} ms by #{peer_endpoint}")
        end
        send_or_fail(request, "request #{sequence}")
        waited = 0
        loop do
          if receive(reply)
            next if more?(reply) && reply.size.zero? # the empty delimiter before a REP's reply

            break
          end
          waited += SLICE_MS
          if waited >= @timeout_ms
            raise Failure.new(4, "no reply to request #{sequence} within #{@timeout_ms} ms from #{peer_endpoint}")
          end
        end
        t1 = ZmqperfPeer.now_ns
        if reply.size != @size
          raise Failure.new(9, "protocol error: a reply of #{reply.size} bytes to a request of #{@size} bytes")
        end
        if @size >= HEADER_LEN
          header = Header.decode(reply.data.read_string(HEADER_LEN))
          unless header && header[2] == sequence
            raise Failure.new(9, "protocol error: the reply to request #{sequence} carries another header")
          end
        end
        next if warm

        start ||= t0
        finish = t1
        latency.record((t1 - t0) / 2)
      end
      line('sent')
      report = empty_report
      report['latency'] = latency.to_json_value
      report['round_trips'] = span(count, count * @size, start || 0, finish || 0)
      report
    end

    def run_echo
      expect = @spec.fetch('expect', 0)
      ends_itself = @spec.fetch('ends_itself', false)
      frames = [ZMQ::Message.new]
      answered = bytes = idle_ms = 0
      start = finish = 0
      cut_short = nil
      @control.wait_for_start(@timeout_ms)
      until ends_itself && expect.positive? && answered >= expect
        unless receive(frames[0])
          idle_ms += SLICE_MS
          break if @control.stopped?
          next if idle_ms < @timeout_ms

          cut_short = "nothing arrived for #{idle_ms} ms"
          break
        end
        idle_ms = 0
        start = ZmqperfPeer.now_ns if answered.zero?
        n = 1
        while more?(frames[n - 1])
          frames << ZMQ::Message.new if frames.size == n
          @socket.recvmsg(frames[n])
          n += 1
        end
        bytes += frames[n - 1].size
        n.times do |i|
          next if ZMQ::Util.resultcode_ok?(@socket.sendmsg(frames[i], i + 1 < n ? ZMQ::SNDMORE : 0))

          raise Failure.new(4, "reply #{answered} not taken within #{@timeout_ms} ms")
        end
        finish = ZmqperfPeer.now_ns
        answered += 1
      end
      report = empty_report
      report['round_trips'] = span(answered, bytes, start, finish)
      report['cut_short'] = cut_short if cut_short
      report
    end
  end

  def self.version_line
    v = LibZMQ.version
    JSON.generate('binding' => "ffi-rzmq #{ZMQ::VERSION} (ffi-rzmq-core, Ruby #{RUBY_VERSION})",
                  'engine' => "libzmq #{v[:major]}.#{v[:minor]}.#{v[:patch]}")
  end

  def self.main(argv)
    return puts(version_line) if argv == ['--version']
    raise Failure.new(2, "usage: ruby peer.rb '<node spec as JSON>' | ruby peer.rb --version") if argv.size != 1

    spec = begin
      JSON.parse(argv[0])
    rescue JSON::ParserError => e
      raise Failure.new(2, "bad node spec: #{e.message.lines.first.strip}")
    end
    raise Failure.new(2, 'bad node spec: not a JSON object') unless spec.is_a?(Hash)

    Node.new(spec, $stdout).run
  rescue Failure => e
    warn "peer ffi-rzmq: #{e.message}"
    $stdout.write(JSON.generate('type' => 'error', 'v' => 1, 'message' => e.message, 'exit_code' => e.code), "\n")
    $stdout.flush
    exit! e.code
  end
end

ZmqperfPeer.main(ARGV) if $PROGRAM_NAME == __FILE__
