package config

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// AddFlags defines keadm join's flags, with its names and short forms, so
// that commands written for keadm work with `config` and `join` alike.
func (o *JoinOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.CloudCoreIPPort, "cloudcore-ipport", "e", "", "Address and hub port of cloudcore, e.g. 192.168.1.10:10000")
	fs.StringVarP(&o.Token, "token", "t", "", "Join token printed by `keadm gettoken` on the cloud side")
	fs.StringVarP(&o.EdgeNodeName, "edgenode-name", "i", "", "Node name (default: the host name in lowercase)")
	fs.StringVarP(&o.CertPort, "certport", "s", DefaultCertPort, "Port on which cloudcore issues certificates")
	fs.StringSliceVarP(&o.Labels, "labels", "l", nil, "Node labels, key=value[,key=value]")
	fs.StringVarP(&o.RemoteRuntimeEndpoint, "remote-runtime-endpoint", "p", "", "CRI endpoint (default: the containerd named pipe on Windows)")
	fs.StringVar(&o.HubProtocol, "hub-protocol", HubWebSocket, "Protocol to talk to cloudcore: websocket or quic")
	// Stored inverted, as NoStream, so that the options' zero value is the
	// default: the tunnel on.
	fs.Var(streamFlag{&o.NoStream}, "stream", "Connect to cloudcore's stream tunnel (port "+DefaultTunnelPort+
		") for kubectl logs, exec, attach and metrics; --stream=false leaves it off")
	fs.Lookup("stream").NoOptDefVal = "true"
	fs.Var(optionalBool{&o.Services}, "services", "Serve Services at the node: ClusterIP and NodePort for the node's pods (Windows' kernelspace proxier) "+
		"and the cluster's DNS names, from the node's own store (featureGates."+GateServices+"; needs cloudcore's dynamicController). "+
		"Default: on when join writes the pod network, off otherwise")
	fs.Lookup("services").NoOptDefVal = "true"
}

// optionalBool is a boolean flag whose absence is its own value (nil):
// the command decides then.
type optionalBool struct{ v **bool }

func (f optionalBool) String() string {
	if f.v == nil || *f.v == nil {
		return "auto"
	}
	return strconv.FormatBool(**f.v)
}

func (f optionalBool) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("expected true or false, got %q", v)
	}
	*f.v = &on
	return nil
}

func (f optionalBool) Type() string { return "bool" }

// streamFlag is --stream, a boolean flag defaulting to true, held as its
// negation.
type streamFlag struct{ no *bool }

func (f streamFlag) String() string {
	if f.no == nil {
		return "true"
	}
	return strconv.FormatBool(!*f.no)
}

func (f streamFlag) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("expected true or false, got %q", v)
	}
	*f.no = !on
	return nil
}

func (f streamFlag) Type() string { return "bool" }

// JoinFile is the configuration file of a node joining the cloudcore at
// cloud: a header naming the node and the cloud and saying that the token
// goes once the certificates are issued (the file holds a credential
// until then), then c as YAML. writtenBy, when not empty, names the
// command that wrote the file.
func JoinFile(c *v1alpha2.EdgeCoreConfig, cloud, writtenBy string) ([]byte, error) {
	body, err := yaml.Marshal(c)
	if err != nil {
		return nil, err
	}
	by := "."
	if writtenBy != "" {
		by = "; written by " + writtenBy + "."
	}
	header := "# edgecore configuration for node " + c.Modules.Edged.HostnameOverride + ", joining cloudcore at " + cloud + by + "\n" +
		"# The token is removed from this file once the node certificates are issued.\n"
	return append([]byte(header), body...), nil
}
