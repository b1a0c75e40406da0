"""The HTTP API: `create_api(app, settings)` builds a FastAPI application over an `App`.

Routes only translate between HTTP and `backroom.service.jobs`; errors are RFC 9457
problem documents; `Authorization: Bearer KEY` names the tenant.
"""

from backroom.api.factory import create_api
from backroom.api.settings import ApiSettings

__all__ = ["ApiSettings", "create_api"]
