//go:build wine

package wine

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"sigs.k8s.io/yaml"

	"github.com/kubeedge-windows/edgecore/config"
)

// A joined node's l2bridge needs no --subnet: cni-config reads the pod
// range from the Node object in the node's database, which the test
// writes the way the node's metamanager stores it.
func TestCNIConfigL2BridgeTakesThePodRangeFromTheNode(t *testing.T) {
	h := newCNIHost(t, "containerd-1.7.25-windows-default.toml", false)
	hub, certs := listen(t), listen(t)
	_, certPort, _ := strings.Cut(certs, ":")
	cfg := filepath.Join(driveCTempDir(t), "edgecore.yaml")
	if r := run(t, time.Minute, "config", "-e", hub, "-s", certPort, "-t", testToken, "-i", "win-7", "--stream=false", "-o", toWindowsPath(cfg)); r.code != 0 {
		t.Fatalf("config: exit %d\n%s", r.code, r.stderr)
	}
	db := filepath.Join(t.TempDir(), "edgecore.db")
	c, _, err := config.Load(cfg, config.Host{GOOS: "windows"})
	if err != nil {
		t.Fatal(err)
	}
	c.DataBase.DataSource = toWindowsPath(db)
	data, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"cni-config", "--mode", "l2bridge", "--cluster-cidr", "10.244.0.0/16", "--service-cidr", "10.96.0.0/12",
		"--dns", "10.96.0.10", "--config", toWindowsPath(cfg), "--dry-run"}
	args = append(args, h.flags("0-containerd-l2bridge.conf")...)

	// Not run yet: no database, so the operator is asked for --subnet.
	r := run(t, time.Minute, args...)
	if r.code != 1 || !strings.Contains(r.stderr, "--subnet was not given and the node's pod range is unknown") ||
		!strings.Contains(r.stderr, "kubectl get node win-7 -o jsonpath={.spec.podCIDR}") {
		t.Errorf("before the node ran: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("cni-config created %s (%v)", db, err)
	}

	sqlDB, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	for _, stmt := range []string{
		`CREATE TABLE meta (key varchar(256) PRIMARY KEY, type varchar(32), value text)`,
		`INSERT INTO meta VALUES ('default/node/win-7', 'node', '{"metadata":{"name":"win-7"},"spec":{"podCIDR":"10.244.7.0/24","podCIDRs":["10.244.7.0/24"]}}')`,
	} {
		if _, err := sqlDB.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	r = run(t, time.Minute, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"Pod range of this node from its Node object: 10.244.7.0/24",
		`- create or reuse the HNS network "edgecore-l2bridge" (L2Bridge, 10.244.7.0/24, gateway 10.244.7.1)`,
		"ip route add 10.244.7.0/24 via ",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, r.stdout)
		}
	}
	h.unchanged(t, "dry run")
}
