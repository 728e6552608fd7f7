"""The floor: tables (game, seats, the pool they feed) and their terminals."""

from django.db import models
from django.db.models import Q


class Game(models.TextChoices):
    UTH = "uth", "Ultimate Texas Hold'em"
    STUD = "stud", "Stud Poker"


class Table(models.Model):
    name = models.CharField(max_length=80, unique=True)
    game = models.CharField(max_length=4, choices=Game.choices)
    pool = models.ForeignKey(
        "jackpot.Pool", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )  # no reverse accessor: the progressive does not read the tables' rows (tables.pools)
    seats = models.PositiveSmallIntegerField(default=7)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(seats__gte=1, seats__lte=7), name="table_seats"),
            models.CheckConstraint(
                condition=Q(game=Game.UTH) | Q(pool__isnull=True), name="table_pool_only_uth"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Terminal(models.Model):
    """A table's terminal; it authenticates with a bearer token stored as its SHA-256."""

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="terminals")
    name = models.CharField(max_length=80)
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.table} / {self.name}"
