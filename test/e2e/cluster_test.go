//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// cluster is a control plane on loopback: etcd, kube-apiserver,
// kube-controller-manager's node lifecycle controller and cloudcore, all
// real, with no kubelet of its own.
type cluster struct {
	dir        string
	pki        *pki
	kubeconfig string
	rest       *rest.Config
	client     *kubernetes.Clientset
	cloudcore  *proc
	// nodeLifecycle is kube-controller-manager running its node lifecycle
	// controller: what marks a node Ready=Unknown when its heartbeats stop.
	nodeLifecycle *proc
	// controllerManager runs only in the scenarios that need it.
	controllerManager *proc
	cloudArgs         []string
	// hubAnswered is when the hub of the cloudcore started last first
	// answered.
	hubAnswered time.Time
	hubPort     int
	certPort    int
	// dynamicController is cloudcore's module that sends edge nodes the
	// Services and EndpointSlices they ask for (off by default, as in
	// cloudcore's own defaults).
	dynamicController bool
}

func startCluster(t *testing.T) *cluster { return startClusterWith(t, cluster{}) }

// startClusterWith starts a cluster with the cloud's settings of opts
// (dynamicController).
func startClusterWith(t *testing.T, opts cluster) *cluster {
	t.Helper()
	dir := t.TempDir()
	keepLogsOnFailure(t, dir)
	c := &cluster{dir: dir, pki: newPKI(t, dir), dynamicController: opts.dynamicController}

	etcdPort, peerPort := freePort(t), freePort(t)
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	start(t, dir, "etcd", nil, mustEnv(t, "ETCD_BIN"),
		"--name", "e2e", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e2e="+peerURL)
	waitTCP(t, fmt.Sprintf("127.0.0.1:%d", etcdPort), time.Minute)

	apiPort := freePort(t)
	start(t, dir, "kube-apiserver", nil, mustEnv(t, "KUBE_APISERVER_BIN"),
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(apiPort),
		"--cert-dir", filepath.Join(dir, "apiserver-certs"),
		"--tls-cert-file", c.pki.serverCert, "--tls-private-key-file", c.pki.serverKey,
		"--client-ca-file", c.pki.caCert,
		"--service-account-key-file", c.pki.saPublic, "--service-account-signing-key-file", c.pki.saPrivate,
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range", "10.96.0.0/12",
		"--authorization-mode", "Node,RBAC",
		// No controller-manager creates service account tokens, and a
		// loopback advertise address is refused by the endpoint reconciler.
		"--disable-admission-plugins", "ServiceAccount",
		"--endpoint-reconciler-type", "none",
		// As kubeadm sets it: a node's name is no DNS name here, and its
		// InternalIP is where cloudcore's iptables rule (the test's
		// forwarder) takes the connection into cloudStream.
		"--kubelet-preferred-address-types", "InternalIP,ExternalIP,Hostname",
		"--allow-privileged")

	c.kubeconfig = filepath.Join(dir, "admin.kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["e2e"] = &clientcmdapi.Cluster{Server: fmt.Sprintf("https://127.0.0.1:%d", apiPort), CertificateAuthority: c.pki.caCert}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificate: c.pki.adminCert, ClientKey: c.pki.adminKey}
	kc.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "admin"}
	kc.CurrentContext = "e2e"
	if err := clientcmd.WriteToFile(*kc, c.kubeconfig); err != nil {
		fatal(t, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		fatal(t, err)
	}
	c.rest = cfg
	if c.client, err = kubernetes.NewForConfig(cfg); err != nil {
		fatal(t, err)
	}
	eventually(t, 2*time.Minute, "kube-apiserver ready", func() (bool, error) {
		body, err := c.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(context.Background())
		return err == nil && string(body) == "ok", err
	})
	c.applyCRDs(t)
	c.startNodeLifecycle(t)
	ctx := context.Background()
	for _, ns := range []string{"kubeedge"} {
		_, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			fatal(t, err)
		}
	}
	c.startCloudcore(t)
	return c
}

// nodeGrace is how long the node lifecycle controller waits for a node's
// heartbeat (a renewal of its Lease or a status the kubelet sends) before
// it marks the node Ready=Unknown: Kubernetes' default is 50 s. Here it is
// short enough that the cloud outage of the scenarios sees the node go
// Unknown, yet three times the kubelet's Lease renewal period (10 s, a
// quarter of edgecore's nodeLeaseDurationSeconds of 40), so that a node
// that is up never goes Unknown between two renewals, which reach the API
// server through cloudcore.
const nodeGrace = 30 * time.Second

// startNodeLifecycle runs kube-controller-manager with its node lifecycle
// controller only, as every cluster an operator joins an edge node to runs
// it (keadm's cloud included: KubeEdge relies on it and on its taints, and
// its admission webhook's offline migration adds a toleration of the
// unreachable taint it sets). It is what turns a node whose heartbeats
// stopped Ready=Unknown, taints it unreachable and marks its pods not
// ready, and it never sets Ready=True: only the kubelet's own status does.
// No other controller runs: nothing evicts pods (the taint eviction
// controller would, after the 300 s every pod tolerates), and nothing
// schedules them (the tests bind pods themselves).
func (c *cluster) startNodeLifecycle(t *testing.T) {
	t.Helper()
	c.nodeLifecycle = start(t, c.dir, "kube-controller-manager", nil, mustEnv(t, "KUBE_CONTROLLER_MANAGER_BIN"),
		"--kubeconfig", c.kubeconfig,
		"--controllers", "node-lifecycle-controller",
		"--leader-elect=false",
		// No port of its own: nothing in the test reads its metrics.
		"--secure-port=0",
		"--node-monitor-period=1s",
		"--node-monitor-grace-period="+nodeGrace.String())
	eventually(t, time.Minute, "kube-controller-manager's node lifecycle controller started", func() (bool, error) {
		return c.nodeLifecycle.logContains(`"Started controller" controller="node-lifecycle-controller"`), nil
	})
}

// applyCRDs installs KubeEdge's CRDs from the upstream module, as
// `keadm init` does.
func (c *cluster) applyCRDs(t *testing.T) {
	t.Helper()
	client, err := apiextensionsclient.NewForConfig(c.rest)
	if err != nil {
		fatal(t, err)
	}
	files, err := filepath.Glob(filepath.Join(mustEnv(t, "KUBEEDGE_CRDS"), "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		fatalf(t, "no CRDs under %s: %v", os.Getenv("KUBEEDGE_CRDS"), err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			fatal(t, err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			fatalf(t, "%s: %v", f, err)
		}
		_, err = client.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), &crd, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			fatalf(t, "create CRD %s: %v", crd.Name, err)
		}
	}
}
