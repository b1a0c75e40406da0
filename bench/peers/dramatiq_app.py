"""Dramatiq at its defaults: the RabbitMQ broker at localhost (what `dramatiq` picks when
no broker is set), its worker's processes and threads.

    dramatiq bench.peers.dramatiq_app
"""

from __future__ import annotations

from typing import Any

import dramatiq
from dramatiq.brokers.rabbitmq import RabbitmqBroker

from bench.peers.marks import mark

broker: Any = RabbitmqBroker()
dramatiq.set_broker(broker)
noop: Any = dramatiq.actor(mark, actor_name="noop")
