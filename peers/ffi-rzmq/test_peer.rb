# frozen_string_literal: true

# Conformance test of the ffi-rzmq peer: every vector of spec/header-vectors.json, then the
# peer against itself over tcp on 127.0.0.1 (PUSH source -> PULL sink, REQ ping -> REP echo),
# every wait bounded.
#
#   ruby test_peer.rb spec/header-vectors.json

VECTORS = ARGV.shift or abort('usage: ruby test_peer.rb spec/header-vectors.json')

require 'json'
require 'minitest/autorun'
require_relative 'peer'

PEER = File.join(__dir__, 'peer.rb')

class HeaderVectorsTest < Minitest::Test
  def vectors = JSON.parse(File.read(VECTORS)).fetch('vectors')

  def test_every_vector
    assert_equal 11, vectors.size
    vectors.each do |v|
      bytes = [v.fetch('hex')].pack('H*')
      case v.fetch('expect')
      when 'plain'
        assert_nil ZmqperfPeer::Header.decode(bytes), v['name']
      when 'error:unsupported-version'
        e = assert_raises(ZmqperfPeer::Failure, v['name']) { ZmqperfPeer::Header.decode(bytes) }
        assert_match(/version/, e.message)
      when 'error:reserved-flags'
        e = assert_raises(ZmqperfPeer::Failure, v['name']) { ZmqperfPeer::Header.decode(bytes) }
        assert_match(/reserved/, e.message)
      else
        f = v.fetch('fields')
        assert_equal 1, f.fetch('version'), v['name']
        want = [f['flags'], f['stream_id'], f['sequence'], f['send_ns']]
        assert_equal want, ZmqperfPeer::Header.decode(bytes), v['name']
        assert_equal bytes.byteslice(0, 24), ZmqperfPeer::Header.encode(*want), v['name']
      end
    end
  end
end

class LoopbackTest < Minitest::Test
  COMMON = { 'size' => 64, 'warmup' => 10, 'rate' => nil, 'stamp_every' => 16, 'timeout_ms' => 5000,
             'stream_id' => 3 }.freeze

  # A peer process with its control lines.
  class Child
    def initialize(spec)
      @io = IO.popen(['ruby', PEER, JSON.generate(spec)], 'r+')
    end

    def say(type)
      @io.puts(JSON.generate('type' => type, 'v' => 1))
      @io.flush
    end

    def expect(type, seconds)
      ready = IO.select([@io], nil, nil, seconds)
      raise "no #{type} line within #{seconds} s" unless ready

      line = @io.gets or raise "the peer closed its stdout before #{type}"
      msg = JSON.parse(line)
      raise "expected #{type}, got #{line}" unless msg['type'] == type

      msg
    end

    # On a failed assertion: no peer outlives the test.
    def kill
      Process.kill('KILL', @io.pid)
      Process.waitpid(@io.pid)
    rescue Errno::ESRCH, Errno::ECHILD
      nil
    end

    # The exit status, waited for at most 5 s (then the peer is killed and the test fails).
    def finish
      deadline = Time.now + 5
      until Process.waitpid(@io.pid, Process::WNOHANG)
        if Time.now > deadline
          Process.kill('KILL', @io.pid)
          Process.waitpid(@io.pid)
          raise 'the peer did not exit within 5 s'
        end
        sleep 0.02
      end
      $?.exitstatus # rubocop:disable Style/SpecialGlobalVars
    ensure
      @io.close unless @io.closed?
    end
  end

  def pair(rx_role, rx_kind, tx_role, tx_kind, count)
    rx = tx = nil
    rx = Child.new(COMMON.merge('name' => 'rx', 'role' => rx_role, 'count' => count,
                                'streams' => [[3, count]], 'ends_itself' => true, 'expect' => count + 10,
                                'sockets' => [{ 'kind' => rx_kind, 'bind' => ['tcp://127.0.0.1:*'],
                                                'connect' => [], 'options' => {} }]))
    endpoint = rx.expect('ready', 10).fetch('endpoints').first
    assert_match(%r{\Atcp://127\.0\.0\.1:\d+\z}, endpoint)
    tx = Child.new(COMMON.merge('name' => 'tx', 'role' => tx_role, 'count' => count, 'quit' => 'wait-for-stop',
                                'sockets' => [{ 'kind' => tx_kind, 'bind' => [], 'connect' => [endpoint],
                                                'options' => {} }]))
    tx.expect('ready', 10)
    [rx, tx].each { |c| c.say('start') }
    yield rx, tx
    assert_equal 0, tx.finish
    assert_equal 0, rx.finish
  ensure
    [rx, tx].compact.each(&:kill) if $! # rubocop:disable Style/SpecialGlobalVars
  end

  def buckets_count(histogram) = histogram.fetch('buckets').sum { |_, c| c }

  def test_source_to_sink_over_tcp
    count = 10_000
    pair('sink', 'PULL', 'source', 'PUSH', count) do |rx, tx|
      tx.expect('sent', 30)
      sink = rx.expect('report', 10).fetch('report')
      tx.say('stop')
      source = tx.expect('report', 10).fetch('report')
      assert_equal count, source.dig('send', 'messages')
      assert_equal count, sink.dig('delivered', 'messages')
      assert_equal [[0, count]], sink.dig('ledger', 'runs', '3').map { |first, len, _| [first, len] }
      assert_equal 626, buckets_count(sink['latency']) # every 16th of 10,000, and the last
      assert sink['header']
    end
  end

  def test_ping_to_echo_over_tcp
    count = 1000
    pair('echo', 'REP', 'ping', 'REQ', count) do |rx, tx|
      tx.expect('sent', 30)
      ping = tx.expect('report', 10).fetch('report')
      echo = rx.expect('report', 10).fetch('report')
      assert_equal count, ping.dig('round_trips', 'messages')
      assert_equal count, buckets_count(ping['latency'])
      assert_equal count + 10, echo.dig('round_trips', 'messages')
    end
  end
end
