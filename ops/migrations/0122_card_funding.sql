-- Issue 27 (defect 5): the CFDI's FormaPago of a card payment follows the card's funding type
-- (c_FormaPago 04 Tarjeta de crédito, 28 Tarjeta de débito). The acquirer's answer carries it in live
-- mode (connectors set `card_funding`); in test mode the sim's tokens say it: `tok_sim_debit…` is a
-- debit card, `tok_sim_prepaid…` a prepaid one (28 as well), any other a credit card.
alter table attempts add column if not exists card_funding text check (card_funding in ('credit', 'debit', 'prepaid'));
create or replace function attempts_card_funding() returns trigger language plpgsql as $$
begin
  if new.method = 'card' and new.card_funding is null and not new.livemode and new.payment_token is not null then
    new.card_funding := case when new.payment_token like 'tok_sim_debit%' then 'debit' when new.payment_token like 'tok_sim_prepaid%' then 'prepaid' else null end;
  end if;
  return new;
end $$;
drop trigger if exists attempts_card_funding on attempts;
create trigger attempts_card_funding before insert on attempts for each row execute function attempts_card_funding();
