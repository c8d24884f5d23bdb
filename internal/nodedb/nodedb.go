// Package nodedb reads what edgecore's local database knows about its own
// node. Upstream's metamanager keeps every object the cloud sends the node
// in the SQLite table meta (key "<namespace>/node/<name>", type "node",
// value the object's JSON), so once a node has joined and run, commands on
// the host can answer from there without credentials for the cluster and
// without the cloud being reachable.
package nodedb

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	// The SQLite driver upstream's database layer registers as "sqlite3".
	_ "github.com/mattn/go-sqlite3"
	corev1 "k8s.io/api/core/v1"
)

// ErrNotFound means the database holds no object for the node yet: it has
// not joined, or has not run long enough to receive its Node.
var ErrNotFound = errors.New("the node's object is not in the local database")

// Node returns the Node object of name as the node last received it.
func Node(dataSource, name string) (*corev1.Node, error) {
	// Opening a missing file would create an empty database where the node
	// will later look for its own.
	if _, err := os.Stat(dataSource); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s does not exist", ErrNotFound, dataSource)
		}
		return nil, err
	}
	// Read-only, and patient with a running edgecore that holds a write
	// lock for a moment.
	db, err := sql.Open("sqlite3", dataSource+"?_query_only=1&_busy_timeout=5000")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dataSource, err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT key, value FROM meta WHERE type = 'node'`)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dataSource, err)
	}
	defer rows.Close()
	suffix := "/node/" + name
	for rows.Next() {
		var key, value string
		if err := rows.Scan(&key, &value); err != nil {
			return nil, fmt.Errorf("read %s: %w", dataSource, err)
		}
		if key != suffix[1:] && !strings.HasSuffix(key, suffix) {
			continue
		}
		var n corev1.Node
		if err := json.Unmarshal([]byte(value), &n); err != nil {
			return nil, fmt.Errorf("%s: the stored object %s is not a Node: %w", dataSource, key, err)
		}
		return &n, nil
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", dataSource, err)
	}
	return nil, fmt.Errorf("%w: %s has no node %q", ErrNotFound, dataSource, name)
}

// PodCIDR is the pod range the cluster gave the node (spec.podCIDR, which
// kube-controller-manager sets with --allocate-node-cidrs).
func PodCIDR(dataSource, name string) (string, error) {
	n, err := Node(dataSource, name)
	if err != nil {
		return "", err
	}
	if n.Spec.PodCIDR == "" {
		return "", fmt.Errorf("node %q has no spec.podCIDR in %s: the cluster does not allocate node pod ranges (kube-controller-manager --allocate-node-cidrs)", name, dataSource)
	}
	return n.Spec.PodCIDR, nil
}
