package modules

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	beehiveContext "github.com/kubeedge/beehive/pkg/core/context"
	"github.com/kubeedge/beehive/pkg/core/model"
	cloudmodules "github.com/kubeedge/kubeedge/cloud/pkg/common/modules"
	edgemodules "github.com/kubeedge/kubeedge/edge/pkg/common/modules"
	"github.com/kubeedge/kubeedge/pkg/metaserver"
)

// sendToCloud sends m through edgeHub and waits for the cloud's answer.
func sendToCloud(m model.Message) (model.Message, error) {
	return beehiveContext.SendSync(edgemodules.EdgeHubModuleName, m, cloudAnswerTimeout)
}

// cloudAnswerTimeout bounds the wait for the cloud's dynamicController.
const cloudAnswerTimeout = 10 * time.Second

// errNoDynamicController is the error of a request the cloud does not
// answer: cloudcore has no module to take it.
var errNoDynamicController = errors.New("cloudcore answers a node's lists and watches only with its dynamicController on: " +
	"set modules.dynamicController.enable: true in cloudcore.yaml (keadm init --set cloudCore.modules.dynamicController.enable=true) and restart cloudcore")

// askCloud sends one application (metaserver's message to the cloud's
// dynamicController) of node for the objects key names, with opts, and
// returns the cloud's answer body. hint says what lets the cloud answer
// when it refuses.
func askCloud(ctx context.Context, send func(model.Message) (model.Message, error), node, key string, verb metaserver.ApplicationVerb,
	opts metav1.ListOptions, hint string) ([]byte, error) {
	app, err := metaserver.NewApplication(ctx, key, verb, node, "", opts, nil)
	if err != nil {
		return nil, err
	}
	defer app.Cancel()
	app.Identifier()
	msg := model.NewMessage("").SetRoute(metaserver.MetaServerSource, cloudmodules.DynamicControllerModuleGroup).FillBody(app)
	msg.SetResourceOperation("null", "null")
	resp, err := send(*msg)
	if err != nil {
		if strings.Contains(err.Error(), "timeout") {
			return nil, fmt.Errorf("no answer within %v: %w", cloudAnswerTimeout, errNoDynamicController)
		}
		return nil, err
	}
	got, err := metaserver.MsgToApplication(resp)
	if err != nil {
		return nil, fmt.Errorf("the cloud's answer: %w", err)
	}
	switch got.Status {
	case metaserver.Approved:
		return got.RespBody, nil
	case metaserver.Rejected:
		return nil, fmt.Errorf("the cloud refused it: %s%s (%s)", got.Error.Error(), got.Reason, hint)
	}
	return nil, fmt.Errorf("the cloud answered %s: %s", got.Status, got.Reason)
}
