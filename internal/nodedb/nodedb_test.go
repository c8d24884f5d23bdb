package nodedb

import (
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager/dao"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager/dao/dbclient"
	"github.com/kubeedge/kubeedge/edge/pkg/metamanager/dao/models"
)

// The database is written by upstream's own code, the way metamanager
// stores a Node the cloud sent (key as edged's meta client names it), so
// the test breaks if upstream changes its table.
func TestNodeFromUpstreamsDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "edgecore.db")

	// Before the node ever ran there is no database, and reading must not
	// create one.
	if _, err := PodCIDR(path, "win-1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing database: err %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("reading a missing database created %s (%v)", path, err)
	}

	dao.Init(path, &v1alpha2.MetaManager{Enable: true})
	metas := dbclient.NewMetaService()
	store := func(namespace string, n *corev1.Node) {
		t.Helper()
		data, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := metas.InsertOrUpdate(&models.Meta{Key: namespace + "/node/" + n.Name, Type: "node", Value: string(data)}); err != nil {
			t.Fatal(err)
		}
	}
	node := func(name, cidr string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{PodCIDR: cidr}}
	}

	if _, err := PodCIDR(path, "win-1"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"win-1"`) {
		t.Fatalf("empty database: err %v, want ErrNotFound naming the node", err)
	}

	store("default", node("win-10", "10.244.9.0/24"))
	store("default", node("win-1", "10.244.2.0/24"))
	got, err := PodCIDR(path, "win-1")
	if err != nil || got != "10.244.2.0/24" {
		t.Fatalf("PodCIDR(win-1) = %q, %v; want 10.244.2.0/24 (and not win-10's range)", got, err)
	}

	store("default", node("win-2", ""))
	if _, err := PodCIDR(path, "win-2"); err == nil || !strings.Contains(err.Error(), "--allocate-node-cidrs") {
		t.Fatalf("node without a pod range: err %v, want the fix on the cloud side", err)
	}

	// A later update of the node replaces the row; the newest range wins.
	store("default", node("win-1", "10.244.3.0/24"))
	if got, err := PodCIDR(path, "win-1"); err != nil || got != "10.244.3.0/24" {
		t.Fatalf("after an update PodCIDR(win-1) = %q, %v; want 10.244.3.0/24", got, err)
	}

	// Pods are stored as metamanager stores what edgecontroller sends
	// ("<namespace>/pod/<name>"); a pod's status patch is another type.
	if pods, err := Pods(path); err != nil || len(pods) != 0 {
		t.Fatalf("no pods yet: Pods = %v, %v", pods, err)
	}
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1", Annotations: map[string]string{"edge.kubeedge.io/hold-upgrade": "true"}},
			Status: corev1.PodStatus{Phase: corev1.PodPending}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "plc"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
	} {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := metas.InsertOrUpdate(&models.Meta{Key: p.Namespace + "/pod/" + p.Name, Type: "pod", Value: string(data)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := metas.InsertOrUpdate(&models.Meta{Key: "default/podpatch/web-1", Type: "podpatch", Value: `{"status":{}}`}); err != nil {
		t.Fatal(err)
	}
	pods, err := Pods(path)
	if err != nil {
		t.Fatal(err)
	}
	got2 := map[string]corev1.PodPhase{}
	for _, p := range pods {
		got2[p.Namespace+"/"+p.Name] = p.Status.Phase
	}
	if len(got2) != 2 || got2["default/web-1"] != corev1.PodPending || got2["shop/plc"] != corev1.PodRunning ||
		pods[0].Annotations["edge.kubeedge.io/hold-upgrade"]+pods[1].Annotations["edge.kubeedge.io/hold-upgrade"] != "true" {
		t.Fatalf("Pods = %v; want default/web-1 (Pending, annotated) and shop/plc (Running)", got2)
	}

	// Services and EndpointSlices, as metamanager stores what the cloud's
	// dynamicController sends, are counted by type.
	for _, m := range []models.Meta{
		{Key: "default/service/kubernetes", Type: "service", Value: "{}"},
		{Key: "kube-system/service/kube-dns", Type: "service", Value: "{}"},
		{Key: "default/endpointslice/kubernetes", Type: "endpointslice", Value: "{}"},
	} {
		if err := metas.InsertOrUpdate(&m); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := Count(path, "service"); n != 2 || err != nil {
		t.Fatalf("Count(service) = %d, %v", n, err)
	}
	if n, err := Count(path, "endpointslice"); n != 1 || err != nil {
		t.Fatalf("Count(endpointslice) = %d, %v", n, err)
	}
	if _, err := Count(filepath.Join(dir, "absent.db"), "service"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Count of a missing database: %v", err)
	}
}

func TestNodeRejectsAnotherObject(t *testing.T) {
	// A value that is not JSON at all is reported with its key, never
	// taken as an empty node.
	dir := t.TempDir()
	path := filepath.Join(dir, "edgecore.db")
	db, err := openForTest(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE meta (key varchar(256) PRIMARY KEY, type varchar(32), value text)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO meta VALUES ('default/node/win-1', 'node', 'not json')`); err != nil {
		t.Fatal(err)
	}
	if _, err := PodCIDR(path, "win-1"); err == nil || !strings.Contains(err.Error(), "default/node/win-1") {
		t.Fatalf("err %v, want one naming the stored key", err)
	}
}

func openForTest(path string) (*sql.DB, error) { return sql.Open("sqlite3", path) }
