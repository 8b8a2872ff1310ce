// Package chtest starts real ClickHouse servers for tests: n servers on
// free loopback ports, each knowing the cluster "ccs_test" whose shards
// are the n servers, stopped when the test ends. The servers are Debian's
// clickhouse-server, which scripts/setup installs.
package chtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
)

// Binary is the server the tests start.
const Binary = "/usr/sbin/clickhouse-server"

// Cluster is the cluster every server's remote_servers defines.
const Cluster = "ccs_test"

// Servers are running ClickHouse servers.
type Servers struct {
	t     testing.TB
	Addrs []string // host:port of each server's native protocol
	cmds  []*exec.Cmd
	dirs  []string
}

// Start starts n servers, each a shard of Cluster, and stops them when the
// test ends. It fails the test, with the command that installs it, when
// the server binary is absent.
func Start(t testing.TB, n int) *Servers {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		t.Fatalf("%s is absent (%v): run scripts/setup, or apt-get install clickhouse-server clickhouse-client", Binary, err)
	}
	s := &Servers{t: t}
	for range n {
		s.Addrs = append(s.Addrs, fmt.Sprintf("127.0.0.1:%d", freePort(t)))
	}
	var shards strings.Builder
	for _, a := range s.Addrs {
		host, port, _ := net.SplitHostPort(a)
		fmt.Fprintf(&shards, "<shard><replica><host>%s</host><port>%s</port></replica></shard>", host, port)
	}
	root := t.TempDir()
	for i, a := range s.Addrs {
		_, port, _ := net.SplitHostPort(a)
		dir := filepath.Join(root, fmt.Sprintf("server%d", i+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "users.xml"), usersXML)
		writeFile(t, filepath.Join(dir, "config.xml"), fmt.Sprintf(configXML, dir, port, shards.String(), Cluster))
		s.dirs = append(s.dirs, dir)
		s.cmds = append(s.cmds, nil)
		s.start(i)
	}
	t.Cleanup(s.stopAll)
	for i := range s.Addrs {
		s.wait(i)
	}
	return s
}

func (s *Servers) start(i int) {
	s.t.Helper()
	dir := s.dirs[i]
	log, err := os.OpenFile(filepath.Join(dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(Binary, "--config-file="+filepath.Join(dir, "config.xml"))
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		s.t.Fatalf("starting %s: %v", Binary, err)
	}
	log.Close()
	s.cmds[i] = cmd
}

// wait waits until server i answers a query.
func (s *Servers) wait(i int) {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ping(s.Addrs[i])
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			logs, _ := os.ReadFile(filepath.Join(s.dirs[i], "server.err.log"))
			s.t.Fatalf("server %d on %s did not answer in 30 s: %v\n%s", i+1, s.Addrs[i], err, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ping(addr string) error {
	conn, err := ch.Open(&ch.Options{Addr: []string{addr}, DialTimeout: time.Second})
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return conn.Ping(ctx)
}

// Stop stops server i (as a crash would: SIGKILL).
func (s *Servers) Stop(i int) {
	s.t.Helper()
	if c := s.cmds[i]; c != nil {
		c.Process.Kill()
		c.Wait()
		s.cmds[i] = nil
	}
}

// Restart starts a stopped server i again, on its port and data.
func (s *Servers) Restart(i int) {
	s.t.Helper()
	s.start(i)
	s.wait(i)
}

func (s *Servers) stopAll() {
	for i := range s.cmds {
		s.Stop(i)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The smallest configuration: loopback only, no HTTP, small caches.
const configXML = `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>%[1]s/server.log</log><errorlog>%[1]s/server.err.log</errorlog><size>10M</size><count>1</count></logger>
  <tcp_port>%[2]s</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>%[1]s/data/</path>
  <tmp_path>%[1]s/tmp/</tmp_path>
  <user_files_path>%[1]s/user_files/</user_files_path>
  <format_schema_path>%[1]s/format_schemas/</format_schema_path>
  <users_config>%[1]s/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>50</max_concurrent_queries>
  <remote_servers><%[4]s>%[3]s</%[4]s></remote_servers>
</yandex>
`

const usersXML = `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage><max_threads>2</max_threads></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`
