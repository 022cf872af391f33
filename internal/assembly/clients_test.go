package assembly

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/testenv"
)

// The route's model.idleTimeout reaches the chat client: a model that
// stalls fails the call at it, not at the runtime's one-minute default.
func TestRouteChatUsesTheConfiguredIdleTimeout(t *testing.T) {
	models := testenv.StartModelServer(8)
	defer models.Close()
	models.Chat = func(testenv.ChatRequest) testenv.ChatReply { return testenv.ChatReply{Content: "never finished"} }
	models.ChunkDelay = 2 * time.Minute // the first chunk comes, then nothing
	chat := Chat(podconfig.ChatModel{BaseURL: models.BaseURL(), Name: "m", IdleTimeout: podconfig.Duration(100 * time.Millisecond)}, os.Getenv)

	start := time.Now()
	_, err := chat.Stream(context.Background(), []model.Message{{Role: model.RoleUser, Content: "hi"}}, nil, model.Generation{}, nil)
	var modelErr *model.Error
	if !errors.As(err, &modelErr) || modelErr.Kind != model.ErrTimeout {
		t.Fatalf("error %v, want a model timeout", err)
	}
	if took := time.Since(start); took >= model.DefaultIdleTimeout/2 {
		t.Errorf("the call failed after %s: the configured idle timeout was not used", took)
	}
}
